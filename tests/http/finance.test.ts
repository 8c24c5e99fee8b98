import { encodeFunctionData, parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterEach, describe, expect, it } from "vitest";
import { TestStablecoin } from "../../contracts/artifacts.js";
import { depositAddressMessage } from "../../src/domain/payouts.js";
import { sealJournal } from "../../src/db/journal-seals.js";
import { pastMonth, testClock } from "../support/clock.js";
import { expectStatus, proposeAndApprove, testApi, type TestApi } from "../support/http.js";
import { payoutWorld, TOKEN, type PayoutWorld } from "../support/payout-world.js";
import { withTriggersOff } from "../support/db.js";

let w: PayoutWorld | undefined;
let api: TestApi | undefined;
afterEach(async () => {
  await api?.close();
  await w?.close();
  w = undefined;
  api = undefined;
});

async function setup() {
  w = await payoutWorld();
  api = await testApi({ db: w.db, settlements: w.settlements });
  const finance = expectStatus(await api.call("POST", "/v1/api-keys", { body: { name: "finance", role: "finance" } }), 201).body.secret as string;
  return { w, api, finance };
}

// The usage lies in the middle of a month wholly in the past, whatever day the suite runs on.
const month = pastMonth();
const usage = (id: string, operator: string, customer: string, quantity: string, price: string) => ({
  external_id: id,
  operator_id: operator,
  customer_id: customer,
  resource: "gpu:h100",
  unit: "gpu_hour",
  quantity,
  unit_price: price,
  asset: TOKEN,
  period_start: month.day(10).toISOString(),
  period_end: month.day(11).toISOString(),
});

describe("finance: trial balance, reports, reconciliation, audit", () => {
  it("the trial balance balances after usage, reversals, payouts on chain and off chain, and deposits on chain", async () => {
    const { w, api, finance } = await setup();
    // A marketplace with a fee schedule, two operators, a prepaid and a postpaid customer.
    expectStatus(await api.call("POST", "/v1/marketplaces", { body: { id: "mkt", name: "GPU market" } }), 201);
    expectStatus(
      await api.call("POST", "/v1/marketplaces/mkt/fee-schedules", {
        body: {
          effective_from: "2020-01-01T00:00:00Z",
          rules: [
            { party: "marketplace", bps: 1000 },
            { party: "protocol", bps: 150 },
          ],
        },
      }),
      201,
    );
    const mk = expectStatus(await api.call("POST", "/v1/api-keys", { body: { name: "mkt", role: "marketplace", scope_id: "mkt" } }), 201).body.secret as string;
    for (const op of ["op-1", "op-2"]) expectStatus(await api.call("POST", "/v1/operators", { key: mk, body: { id: op, name: op } }), 201);
    expectStatus(await api.call("POST", "/v1/customers", { key: mk, body: { id: "pre", billing: "prepaid" } }), 201);
    expectStatus(
      await api.call("POST", "/v1/customers", {
        key: mk,
        body: { id: "post", billing: "postpaid", credit_limits: [{ asset: TOKEN, credit_limit: "1000000000000000000000000" }] },
      }),
      201,
    );
    expectStatus(await api.call("POST", "/v1/customers/pre/deposits", { key: mk, body: { asset: TOKEN, amount: "50000000" } }), 201);

    // The prepaid customer also pays on chain, from its registered address.
    const payer = privateKeyToAccount(generatePrivateKey());
    await w.chain.test.setBalance({ address: payer.address, value: parseEther("1") });
    await w.chain.send({ to: w.chain.token, data: encodeFunctionData({ abi: TestStablecoin.abi, functionName: "mint", args: [payer.address, 30_000_000n] }) });
    const signature = await payer.signMessage({
      message: depositAddressMessage({ marketplaceId: "mkt", customerId: "pre", chainId: 31337n, address: payer.address }),
    });
    const unsigned = await api.call("POST", "/v1/customers/pre/deposit-addresses", {
      key: mk,
      body: { chain_id: 31337, address: payer.address, signature: `0x${"1b".repeat(65)}` },
    });
    expect(unsigned.body).toMatchObject({ status: 422, code: "signature_invalid" });
    expectStatus(await api.call("POST", "/v1/customers/pre/deposit-addresses", { key: mk, body: { chain_id: 31337, address: payer.address, signature } }), 201);
    // The customer's addresses are listed for its marketplace (and admin or finance naming it), by chain and address, a page at a time.
    const others = [privateKeyToAccount(generatePrivateKey()), privateKeyToAccount(generatePrivateKey())];
    for (const a of others) {
      const sig = await a.signMessage({ message: depositAddressMessage({ marketplaceId: "mkt", customerId: "pre", chainId: 31337n, address: a.address }) });
      expectStatus(
        await api.call("POST", "/v1/customers/pre/deposit-addresses", { key: mk, body: { chain_id: 31337, address: a.address, signature: sig } }),
        201,
      );
    }
    const addresses = [payer, ...others].map((a) => a.address.toLowerCase()).sort();
    const first = expectStatus(await api.call("GET", "/v1/customers/pre/deposit-addresses?limit=2", { key: mk }), 200).body;
    expect(first).toMatchObject({ limit: 2, next_cursor: expect.any(String) });
    const second = expectStatus(
      await api.call("GET", `/v1/customers/pre/deposit-addresses?limit=2&cursor=${encodeURIComponent(first.next_cursor)}`, { key: mk }),
      200,
    ).body;
    expect(second.next_cursor).toBeNull();
    expect([...first.data, ...second.data].map((d: { address: string }) => d.address)).toEqual(addresses);
    expect(first.data[0]).toMatchObject({ chain_id: 31337, registered_at: expect.any(String), registered_by: expect.any(String) });
    const asFinance = expectStatus(await api.call("GET", "/v1/customers/pre/deposit-addresses?marketplace_id=mkt", { key: finance }), 200).body;
    expect(asFinance.data).toHaveLength(3);
    expect((await api.call("GET", "/v1/customers/pre/deposit-addresses", { key: finance })).body).toMatchObject({ status: 400, code: "invalid_request" });
    expect((await api.call("GET", "/v1/customers/pre/deposit-addresses?marketplace_id=elsewhere", { key: finance })).body).toMatchObject({
      status: 404,
      code: "customer_not_found",
    });
    expect((await api.call("GET", "/v1/customers/pre/deposit-addresses?cursor=nonsense", { key: mk })).body).toMatchObject({
      status: 400,
      code: "invalid_request",
    });
    await w.chain.wallet(payer).writeContract({
      address: w.chain.token,
      abi: TestStablecoin.abi,
      functionName: "transfer",
      args: [w.chain.vault, 30_000_000n],
      chain: w.chain.deployerWallet.chain,
      account: payer,
    });
    await w.chain.test.mine({ blocks: 3 });
    const worker = w.worker();
    await worker.tick(); // the deposit scanner credits it: the customer's own money, which funds its usage

    // Usage: a batch, one record reversed.
    const batch = expectStatus(
      await api.call("POST", "/v1/usage/batch", {
        key: mk,
        body: {
          records: [
            usage("j1", "op-1", "pre", "10", "2.5"),
            usage("j2", "op-2", "pre", "4", "3.25"),
            usage("j3", "op-1", "post", "7", "1.75"),
            usage("j4", "op-2", "post", "1", "9.99"),
          ],
        },
      }),
      200,
    ).body;
    const j4 = batch.results.find((r: { external_id: string }) => r.external_id === "j4");
    expectStatus(await api.call("POST", `/v1/usage/${j4.id}/reverse`, { key: mk, body: { reason: "meter fault" } }), 201);

    // Payouts: op-1 on chain (after proving an address), and an off-chain one in another asset.
    const acct = privateKeyToAccount(generatePrivateKey());
    const ch = expectStatus(
      await api.call("POST", "/v1/operators/op-1/payout-address-challenges", { body: { chain_id: 31337, address: acct.address } }),
      201,
    ).body;
    // op-1 has earnings waiting: an admin's address for it takes a second key.
    await proposeAndApprove(api, "PUT", "/v1/operators/op-1/payout-address", {
      chain_id: 31337,
      address: acct.address,
      challenge_id: ch.id,
      signature: await acct.signMessage({ message: ch.message }),
    });
    const p1 = expectStatus(await api.call("POST", "/v1/payouts", { key: finance, body: { operator_id: "op-1", asset: TOKEN, amount: "20000000" } }), 201).body;
    await w.drive([p1.id], [worker]);
    expectStatus(await api.call("POST", "/v1/assets", { body: { code: "EUR", scale: 2, settlement: { kind: "offchain" } } }), 201);
    await w.credit("op-2", "EUR", 500_00n);
    const p2 = expectStatus(await api.call("POST", "/v1/payouts", { key: finance, body: { operator_id: "op-2", asset: "EUR", amount: "30000" } }), 201).body;
    expectStatus(await api.call("POST", `/v1/payouts/${p2.id}/mark-paid`, { key: finance, body: { reference: "SEPA-1" } }), 200);

    const tb = expectStatus(await api.call("GET", "/v1/reports/trial-balance", { key: finance }), 200).body;
    expect(tb.totals.length).toBeGreaterThanOrEqual(3); // TUSD, ETH (gas), EUR
    for (const t of tb.totals) expect(t, JSON.stringify(t)).toMatchObject({ balanced: true });
    const byRef = (ref: string, asset = TOKEN) => tb.accounts.find((a: { ref: string; asset: string }) => a.ref === ref && a.asset === asset);
    expect(byRef("customer:pre").balance).toBe(String(50_000_000 + 30_000_000 - 25_000_000 - 13_000_000)); // deposits less usage
    expect(byRef("treasury:31337").balance).toBe(String(30_000_000 - 20_000_000)); // the chain deposit in, the payout out
    expect(byRef("treasury:offchain", "EUR").balance).toBe("-30000");
    expect(byRef("expense:gas:31337", "ETH").balance).not.toBe("0");

    const csv = await api.call("GET", "/v1/reports/trial-balance?format=csv", { key: finance });
    expect(csv.headers.get("content-type")).toMatch(/^text\/csv/);
    const lines = (csv.body as string).trim().split("\r\n");
    expect(lines[0]).toBe(
      "asset,account_id,marketplace_id,ref,code,normal_side,debits,credits,balance,debits_display,credits_display,balance_display,opening,opening_display",
    );
    expect(lines.filter((l) => l.includes(",TOTAL,")).every((l) => l.split(",")[8] === "balanced")).toBe(true); // the balance column

    // As of a moment before anything happened: empty, and balanced.
    const before = expectStatus(await api.call("GET", "/v1/reports/trial-balance?as_of=2000-01-01T00:00:00Z", { key: finance }), 200).body;
    expect(before.accounts).toEqual([]);

    // Fee revenue: 10% marketplace, 1.5% protocol of the usage not reversed, in the usage's month
    // (j4's reversal is effective when j4 was, though it was booked today).
    const fees = expectStatus(
      await api.call("GET", `/v1/reports/fee-revenue?from=${month.from.toISOString()}&to=${month.to.toISOString()}&group_by=month`, { key: finance }),
      200,
    ).body.data;
    const gross = 25_000_000 + 13_000_000 + 12_250_000; // j4 reversed
    expect(fees.find((f: { party: string }) => f.party === "marketplace")).toMatchObject({
      period: month.label,
      asset: TOKEN,
      marketplace_id: "mkt",
      revenue: String(gross / 10),
    });
    expect(fees.find((f: { party: string }) => f.party === "protocol")).toMatchObject({ period: month.label, marketplace_id: null });

    // Payouts by period, with the transaction hash; operator statements close on the payables.
    const now = testClock.now();
    const range = `from=${new Date(now.getTime() - 3_600_000).toISOString()}&to=${new Date(now.getTime() + 60_000).toISOString()}`;
    const payouts = expectStatus(await api.call("GET", `/v1/reports/payouts?${range}`, { key: finance }), 200).body;
    expect(payouts.data.map((p: { id: string }) => p.id).sort()).toEqual([p1.id, p2.id].sort());
    expect(payouts.data.find((p: { id: string }) => p.id === p1.id).tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    const statements = expectStatus(await api.call("GET", `/v1/reports/operator-statements?${range}&asset=${TOKEN}`, { key: finance }), 200).body.data;
    const op1 = statements.find((s: { operator_id: string }) => s.operator_id === "op-1");
    // The usage is effective in the past month: it is in the opening balance, the payout in the period.
    expect(op1).toMatchObject({ credits: "0", debits: "20000000" });
    expect(BigInt(op1.opening)).toBe(BigInt(byRef("operator:op-1:payable").balance) + 20_000_000n);
    expect(BigInt(op1.closing)).toBe(BigInt(byRef("operator:op-1:payable").balance));
    expect((await api.call("GET", "/v1/reports/payouts?from=2026-01-01T00:00:00Z&to=2028-01-01T00:00:00Z", { key: finance })).body.code).toBe(
      "invalid_request",
    );
  });

  it("reconciliation over HTTP: run, filter, CSV, resolve with an adjusting transfer; every call is in the audit log", async () => {
    const { w, api, finance } = await setup();
    const op = await w.operator("rec-op", { [TOKEN]: 1_000_000n });
    const p = expectStatus(await api.call("POST", "/v1/payouts", { key: finance, body: { operator_id: op.id, asset: TOKEN, amount: "400000" } }), 201).body;
    await w.drive([p.id]);
    await w.chain.test.mine({ blocks: 2 });
    const head = Number(await w.chain.public.getBlockNumber()) - 1; // the last final block (2 confirmations)
    const notFinal = await api.call("POST", "/v1/reconciliations", {
      key: finance,
      body: { chain_id: 31337, asset: TOKEN, from_block: 0, to_block: head + 1 },
    });
    expect(notFinal.body).toMatchObject({ status: 400, code: "invalid_request", errors: [{ path: "to_block" }] });
    const run = expectStatus(
      await api.call("POST", "/v1/reconciliations", {
        key: finance,
        body: { chain_id: 31337, asset: TOKEN, from_block: 0, to_block: head },
        headers: { "x-request-id": "recon-1" },
      }),
      201,
    ).body;
    expect(run.summary).toMatchObject({ matched: 1, unexpected_on_chain: 1 }); // the payout; the vault's funding
    const unexpected = expectStatus(await api.call("GET", `/v1/reconciliations/${run.id}?status=unexpected_on_chain`, { key: finance }), 200).body.items;
    expect(unexpected).toHaveLength(1);
    expect(unexpected[0]).toMatchObject({ direction: "in", chain_amount: "1000000000000" });
    const csv = await api.call("GET", `/v1/reconciliations/${run.id}?format=csv`, { key: finance });
    expect((csv.body as string).split("\r\n")[0]).toMatch(/^id,status,direction,payout_id,tx_hash/);
    expect((csv.body as string).trim().split("\r\n")).toHaveLength(3);

    // Resolve the funding with an adjusting transfer: treasury (debit) against equity (credit).
    const asset = (await api.call("GET", "/v1/assets")).body.data.find((a: { code: string }) => a.code === TOKEN);
    const equity = expectStatus(
      await api.call("POST", "/v1/accounts", { body: { asset_id: asset.id, code: "equity", normal_side: "credit", ref: "equity:treasury_funding" } }),
      201,
    ).body;
    const tb = (await api.call("GET", "/v1/reports/trial-balance", { key: finance })).body;
    const treasury = tb.accounts.find((a: { ref: string; asset: string }) => a.ref === "treasury:31337" && a.asset === TOKEN);
    // Finance cannot create an operator's balance through a resolution: not on a matched item, not
    // into an operator's payable, not for more than the discrepancy (each refused, nothing written).
    const protocolFees =
      tb.accounts.find((a: { ref: string; asset: string }) => a.ref === "protocol:fees" && a.asset === TOKEN) ??
      tb.accounts.find((a: { ref: string }) => a.ref === "treasury:31337");
    const payable = tb.accounts.find((a: { ref: string }) => a.ref === `operator:${op.id}:payable`);
    const matched = expectStatus(await api.call("GET", `/v1/reconciliations/${run.id}?status=matched`, { key: finance }), 200).body.items[0];
    const available = async () =>
      (await api.call("GET", `/v1/operators/${op.id}/balances`)).body.data.find((b: { asset: string }) => b.asset === TOKEN).available;
    const before = await available();
    for (const [item, adjustment] of [
      [matched.id, { debit_account_id: protocolFees.account_id, credit_account_id: payable.account_id, amount: "5000000" }],
      [unexpected[0].id, { debit_account_id: protocolFees.account_id, credit_account_id: payable.account_id, amount: "5000000" }],
      [unexpected[0].id, { debit_account_id: treasury.account_id, credit_account_id: payable.account_id, amount: "5000000" }],
      [unexpected[0].id, { debit_account_id: treasury.account_id, credit_account_id: equity.id, amount: "1000000000001" }],
      [unexpected[0].id, { debit_account_id: equity.id, credit_account_id: treasury.account_id, amount: "1000" }], // the wrong way round
    ] as const) {
      const res = await api.call("POST", `/v1/reconciliations/${run.id}/items/${item}/resolve`, { key: finance, body: { note: "make money", adjustment } });
      expect(res.body, JSON.stringify(adjustment)).toMatchObject({ status: 400, code: "invalid_request" });
    }
    expect(await available()).toBe(before);
    // One finance key alone moves nothing: the adjustment is a proposal, and the item stays open.
    const proposed = expectStatus(
      await api.call("POST", `/v1/reconciliations/${run.id}/items/${unexpected[0].id}/resolve`, {
        key: finance,
        body: {
          note: "opening treasury funding",
          adjustment: { debit_account_id: treasury.account_id, credit_account_id: equity.id, amount: "1000000000000" },
        },
      }),
      200,
    ).body;
    expect(proposed).toMatchObject({ resolved_at: null, adjustment_transfer_id: null, proposal_id: expect.any(String) });
    const second = await api.call("POST", `/v1/reconciliations/${run.id}/items/${unexpected[0].id}/resolve`, {
      key: finance,
      body: { note: "again", adjustment: { debit_account_id: treasury.account_id, credit_account_id: equity.id, amount: "1000000000000" } },
    });
    expect(second.status).toBe(409);
    // A second run over the same blocks shows the same inflow as an item of its own: no second proposal for it either.
    const rerun = expectStatus(
      await api.call("POST", "/v1/reconciliations", { key: finance, body: { chain_id: 31337, asset: TOKEN, from_block: 0, to_block: head } }),
      201,
    ).body;
    const same = expectStatus(await api.call("GET", `/v1/reconciliations/${rerun.id}?status=unexpected_on_chain`, { key: finance }), 200).body.items[0];
    expect(same.tx_hash).toBe(unexpected[0].tx_hash);
    const parallel = await api.call("POST", `/v1/reconciliations/${rerun.id}/items/${same.id}/resolve`, {
      key: finance,
      body: { note: "the same funding", adjustment: { debit_account_id: treasury.account_id, credit_account_id: equity.id, amount: "1000000000000" } },
    });
    expect(parallel.body).toMatchObject({ status: 409, code: "item_already_resolved", detail: expect.stringMatching(/shows the same discrepancy/) });
    // Nor does a note settle it behind the proposal's back (the proposal would stay open forever).
    const noted = await api.call("POST", `/v1/reconciliations/${run.id}/items/${unexpected[0].id}/resolve`, { key: finance, body: { note: "just a note" } });
    expect(noted.body).toMatchObject({ status: 409, code: "item_already_resolved", detail: expect.stringMatching(/waiting for approval/) });
    const self = await api.call("POST", `/v1/proposals/${proposed.proposal_id}/approve`, { key: finance, body: {} });
    expect(self.body).toMatchObject({ status: 403, code: "four_eyes" });
    expect(expectStatus(await api.call("GET", "/v1/treasury?chain_id=31337&asset=TUSD", { key: finance }), 200).body.ledger).toBe(String(-400_000));
    // The bootstrap key takes part in no decision; a second person's key does.
    expect((await api.call("POST", `/v1/proposals/${proposed.proposal_id}/approve`, { body: {} })).body).toMatchObject({ status: 403, code: "four_eyes" });
    const controller = expectStatus(await api.call("POST", "/v1/api-keys", { body: { name: "controller", role: "finance" } }), 201).body.secret as string;
    const approved = expectStatus(
      await api.call("POST", `/v1/proposals/${proposed.proposal_id}/approve`, { key: controller, body: { reason: "matches the funding transaction" } }),
      200,
    ).body;
    expect(approved).toMatchObject({ kind: "reconciliation_adjustment", status: "approved", result: { transfer_id: expect.any(String) } });
    const resolved = expectStatus(await api.call("GET", `/v1/reconciliations/${run.id}?status=unexpected_on_chain`, { key: finance }), 200).body.items.find(
      (i: { id: string }) => i.id === unexpected[0].id,
    );
    expect(resolved).toMatchObject({ resolution_note: "opening treasury funding", adjustment_transfer_id: approved.result.transfer_id });
    const again = await api.call("POST", `/v1/reconciliations/${run.id}/items/${unexpected[0].id}/resolve`, { key: finance, body: { note: "twice" } });
    expect(again.status).toBe(409);
    const check = expectStatus(await api.call("GET", "/v1/treasury?chain_id=31337&asset=TUSD", { key: finance }), 200).body;
    expect(check).toMatchObject({ ledger: String(1_000_000_000_000 - 400_000), unexplained: "0", in_flight: { payouts: 0 } });

    // The audit log: who did what, with the request id; refused calls too.
    const log = expectStatus(await api.call("GET", "/v1/audit/log?limit=1000", { key: finance }), 200).body.data;
    const recon = log.find((e: { client_request_id: string | null }) => e.client_request_id === "recon-1");
    expect(recon).toMatchObject({
      method: "POST",
      path: "/v1/reconciliations",
      route: "/v1/reconciliations",
      status: 201,
      role: "finance",
      body_sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(recon.request_id).not.toBe("recon-1");
    expect(log.some((e: { path: string; status: number }) => e.path.endsWith("/resolve") && e.status === 409)).toBe(true);
    expect(log.every((e: { method: string }) => e.method !== "GET")).toBe(true);
  });

  it("GET /v1/audit/verify names the broken link after a posted row is edited with the guard disabled by a superuser", async () => {
    const { w, api, finance } = await setup();
    await w.operator("t-op", { [TOKEN]: 5_000n });
    // Seal until every transfer is covered: a seal ends at the oldest transaction still running on
    // the server, and other test files' transactions may hold it back for a moment.
    for (let i = 0; i < 100; i++) {
      await sealJournal(w.db);
      const [open] = await w.db.query<{ n: string }>(
        "select count(*)::text as n from transfers where txid >= (select coalesce(max(to_txid), 0) from journal_seals)",
      );
      if (open!.n === "0") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(expectStatus(await api.call("GET", "/v1/audit/verify", { key: finance }), 200).body).toMatchObject({ ok: true, violations: [] });
    // A superuser turns the append-only triggers off for one session and rewrites an amount.
    await withTriggersOff(w.db, ["update entries set posted_amount = 9000 where posted_amount = 5000"]);
    const report = expectStatus(await api.call("GET", "/v1/audit/verify", { key: finance }), 200).body;
    expect(report.ok).toBe(false);
    const chain = report.violations.find((v: { check: string }) => v.check === "hash_chain");
    expect(chain?.detail, JSON.stringify(report.violations)).toMatch(/^seal 1 .*changed after sealing/);
  });
});
