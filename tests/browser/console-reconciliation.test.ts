import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, screenshots, serveOnLoopback, signedIn } from "../support/browser.js";
import { expectStatus, testApi, type TestApi } from "../support/http.js";
import { payoutWorld, TOKEN, type PayoutWorld } from "../support/payout-world.js";

/**
 * Resolving a reconciliation item in the console with two keys (docs/reconciliation.md, "Resolving
 * an item"): a finance key resolves the vault's funding (an unexpected inflow) with an adjusting
 * transfer, which is a proposal; it cannot approve it itself; a second finance key approves it in
 * its own browser session, and the item is resolved. A real chain (anvil) and a real payout.
 */

let w: PayoutWorld;
let api: TestApi;
let browser: Browser;
let origin: string;
let stop: () => Promise<void>;

beforeAll(async () => {
  w = await payoutWorld();
  api = await testApi({ db: w.db, settlements: w.settlements });
  const served = await serveOnLoopback(api);
  origin = served.origin;
  stop = served.close;
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await stop?.();
  await api?.close();
  await w?.close();
});

const financeKey = async (name: string) => expectStatus(await api.call("POST", "/v1/api-keys", { body: { name, role: "finance" } }), 201).body.secret as string;

describe("reconciliation in Chromium", () => {
  it("a finance key resolves an item with an adjusting transfer (a proposal); a second finance key approves it; the item is resolved", async () => {
    const finance = await financeKey("finance");
    const op = await w.operator("console-rec-op", { [TOKEN]: 1_000_000n });
    const p = expectStatus(await api.call("POST", "/v1/payouts", { key: finance, body: { operator_id: op.id, asset: TOKEN, amount: "400000" } }), 201).body;
    await w.drive([p.id]);
    await w.chain.test.mine({ blocks: 2 });
    const head = Number(await w.chain.public.getBlockNumber()) - 1;
    const run = expectStatus(
      await api.call("POST", "/v1/reconciliations", { key: finance, body: { chain_id: 31337, asset: TOKEN, from_block: 0, to_block: head } }),
      201,
    ).body;
    const [item] = expectStatus(await api.call("GET", `/v1/reconciliations/${run.id}?status=unexpected_on_chain`, { key: finance }), 200).body.items;
    const asset = (await api.call("GET", "/v1/assets")).body.data.find((a: { code: string }) => a.code === TOKEN);
    const equity = expectStatus(
      await api.call("POST", "/v1/accounts", { body: { asset_id: asset.id, code: "equity", normal_side: "credit", ref: "equity:treasury_funding" } }),
      201,
    ).body;
    const tb = (await api.call("GET", "/v1/reports/trial-balance", { key: finance })).body;
    const treasury = tb.accounts.find((a: { ref: string; asset: string }) => a.ref === "treasury:31337" && a.asset === TOKEN);

    const first = await signedIn(browser, origin, finance);
    expect((await first.page.goto(`${origin}/console/reconciliations`))!.status()).toBe(200);
    await first.page.getByRole("link", { name: run.id }).click();
    await first.page.waitForURL(`${origin}/console/reconciliations/${run.id}`);
    await screenshots(first.page, "reconciliation-run");
    const row = first.page.locator("#items tbody tr").filter({ hasText: "unexpected_on_chain" });
    await row.getByLabel("Note").fill("opening treasury funding");
    await row.getByLabel("Adjust: debit account").fill(treasury.account_id);
    await row.getByLabel("credit account").fill(equity.id);
    await row.getByLabel("amount (units)").fill(item.chain_amount);
    await row.getByRole("button", { name: "Resolve" }).click();
    await first.page.waitForURL(/done=proposed/);
    expect(await first.page.getByRole("status").textContent()).toContain("waits for another key");
    expect(
      expectStatus(await api.call("GET", `/v1/reconciliations/${run.id}?status=unexpected_on_chain`, { key: finance }), 200).body.items[0].resolved_at,
    ).toBeNull();
    const proposed = {
      proposal_id: expectStatus(await api.call("GET", "/v1/proposals?status=proposed&kind=reconciliation_adjustment", { key: finance }), 200).body.data.find(
        (x: { payload: { item_id: string } }) => x.payload.item_id === String(item.id),
      ).id as string,
    };
    // The item offers no second resolution while its proposal is open, and names the proposal.
    const waiting = first.page.locator("#items tbody tr").filter({ hasText: "unexpected_on_chain" });
    expect(await waiting.getByRole("button", { name: "Resolve" }).count()).toBe(0);
    expect(await waiting.textContent()).toContain(proposed.proposal_id);
    // Its proposer cannot approve it.
    await first.page.goto(`${origin}/console/proposals`);
    await first.page.getByRole("row").filter({ hasText: proposed.proposal_id }).getByRole("button", { name: "Approve" }).click();
    expect(await first.page.getByRole("alert").textContent()).toContain("four_eyes");
    await first.context.close();

    const second = await signedIn(browser, origin, await financeKey("controller"));
    await second.page.goto(`${origin}/console/proposals`);
    const pending = second.page.getByRole("row").filter({ hasText: proposed.proposal_id });
    await screenshots(second.page, "reconciliation-proposal");
    await pending.getByLabel("Reason").first().fill("matches the funding transaction");
    await pending.getByRole("button", { name: "Approve" }).click();
    await second.page.waitForURL(/done=approved/);
    await second.page.goto(`${origin}/console/reconciliations/${run.id}`);
    const resolved = second.page.locator("#items tbody tr").filter({ hasText: "unexpected_on_chain" });
    await expect(resolved.locator("td").nth(7).textContent()).resolves.toBe("opening treasury funding");
    await screenshots(second.page, "reconciliation-resolved");
    await second.context.close();
    const after = expectStatus(await api.call("GET", `/v1/reconciliations/${run.id}?status=unexpected_on_chain`, { key: finance }), 200).body.items[0];
    expect(after).toMatchObject({ resolved_at: expect.any(String), adjustment_transfer_id: expect.any(String), resolution_note: "opening treasury funding" });
  });
});
