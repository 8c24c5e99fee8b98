import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { encodeFunctionData } from "viem";
import { describe, expect, it } from "vitest";
import { TestStablecoin } from "../../contracts/artifacts.js";
import { chainSettingsFor } from "../../scripts/anvil-chain.js";
import { loadChains } from "../../src/chain/config.js";
import { Settlements } from "../../src/chain/settlement.js";
import { settingsConflicts, settingsDrift } from "../../src/services/chain-settings.js";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { usageMonth } from "../support/clock.js";
import { expectRefused, expectStatus, fourEyes, testApi, worldPerFile } from "../support/http.js";
import { payoutWorld, TOKEN } from "../support/payout-world.js";

/**
 * Changing and retiring what was created: where an asset's payouts go changes only on two keys'
 * word and never under payouts on their way, with every version kept; names and metadata change
 * within each tenant's own scope; retired assets and customers take no new business.
 */

const TOKEN_A = `0x${"a1".repeat(20)}`;
const TOKEN_B = `0x${"b2".repeat(20)}`;
const TOKEN_C = `0x${"c3".repeat(20)}`;
const TOKEN_D = `0x${"d4".repeat(20)}`;

/**
 * The chain 31337 configured (no node behind it: payouts are only asked for here) with TUSD as
 * TOKEN_B, the token "redeployed" after the database registered TUSD as TOKEN_A.
 */
const settlements = new Settlements(
  loadChains(
    {
      CHAINS: JSON.stringify([
        {
          name: "local",
          chain_id: 31337,
          rpc_urls: ["http://127.0.0.1:9"],
          signer_key_env: "K",
          vault: `0x${"11".repeat(20)}`,
          native_asset: { code: "ETH" },
          assets: [
            { code: "TUSD", token: TOKEN_B, decimals: 6 },
            { code: "ETH", decimals: 18 },
          ],
        },
      ]),
    },
    { K: generatePrivateKey() },
  ),
);

const t = worldPerFile({ settlements });
const erc20 = (token: string, chain_id = 31337) => ({ kind: "erc20", chain_id, token_address: token });
const patchAsset = (code: string, settlement: unknown, key?: string) => t.api.call("PATCH", `/v1/assets/${code}`, { key, body: { settlement } });
const approve = (id: string, key: string) => t.api.call("POST", `/v1/proposals/${id}/approve`, { key, body: {} });
const asset = async (code: string) => expectStatus(await t.api.call("GET", `/v1/assets/${code}`, { key: t.w.keys.o1 }), 200).body;
let n = 0;
const usage = (extra: Record<string, unknown> = {}) => ({
  external_id: `ur-${++n}`,
  operator_id: "o1",
  customer_id: "c1",
  resource: "gpu:h100",
  unit: "gpu_hour",
  quantity: "1",
  amount: "1000",
  asset: "USDC",
  period_start: usageMonth.day(5).toISOString(),
  period_end: usageMonth.day(6).toISOString(),
  ...extra,
});

describe("an asset's settlement", () => {
  it("changes by proposal: 202, nothing changes until another, independent key approves; then every version is kept", async () => {
    const { proposer, approver } = await fourEyes(t.api);
    expectStatus(await t.api.call("POST", "/v1/assets", { body: { code: "TUSD", scale: 6, settlement: erc20(TOKEN_A) } }), 201);
    // The local chain restarted with the token at a new address: registering it again is refused, naming the way out.
    const again = await expectRefused(
      t.api,
      () => t.api.call("POST", "/v1/assets", { body: { code: "TUSD", scale: 6, settlement: erc20(TOKEN_B) } }),
      409,
      "asset_exists",
    );
    expect(again.body.detail).toContain("PATCH /v1/assets/TUSD");
    // The service starts on such settings (a warning, not a refusal), and TUSD is not paid out meanwhile.
    expect(await settingsConflicts(t.api.db, settlements)).toEqual([]);
    expect(await settingsDrift(t.api.db, settlements)).toEqual([expect.stringContaining("PATCH /v1/assets/TUSD")]);

    const proposal = expectStatus(await patchAsset("TUSD", erc20(TOKEN_B.toUpperCase().replace("0X", "0x")), proposer), 202).body;
    expect(proposal).toMatchObject({
      kind: "asset_settlement",
      status: "proposed",
      payload: { asset: "TUSD", from: erc20(TOKEN_A), to: erc20(TOKEN_B) },
    });
    expect((await asset("TUSD")).settlement).toEqual(erc20(TOKEN_A));

    // Four eyes: not the proposer, not the bootstrap key, not a tenant.
    await expectRefused(t.api, () => approve(proposal.id, proposer), 403, "four_eyes");
    await expectRefused(t.api, () => approve(proposal.id, t.w.keys.m1), 403, "forbidden");
    await expectRefused(t.api, () => t.api.call("POST", `/v1/proposals/${proposal.id}/approve`, { body: {} }), 403, "four_eyes");
    expect((await asset("TUSD")).settlement).toEqual(erc20(TOKEN_A));

    const approved = expectStatus(await approve(proposal.id, approver), 200).body;
    expect(approved).toMatchObject({ status: "approved", result: { asset: "TUSD", version: 2, settlement: erc20(TOKEN_B) } });
    const now = await asset("TUSD");
    expect(now.settlement).toEqual(erc20(TOKEN_B));
    expect(now.settlement_history).toEqual([
      { version: 1, settlement: erc20(TOKEN_A), valid_from: now.created_at, valid_to: approved.decided_at, proposal_id: null },
      { version: 2, settlement: erc20(TOKEN_B), valid_from: approved.decided_at, valid_to: null, proposal_id: proposal.id },
    ]);
    expect(await settingsDrift(t.api.db, settlements)).toEqual([]);
  });

  it("is refused to other roles, for unknown fields, an empty change, a native asset, the same settlement, a token another asset has", async () => {
    const { proposer } = await fourEyes(t.api);
    for (const key of [t.w.keys.finance, t.w.keys.m1, t.w.keys.o1]) await expectRefused(t.api, () => patchAsset("TUSD", erc20(TOKEN_C), key), 403, "forbidden");
    await expectRefused(t.api, () => t.api.call("PATCH", "/v1/assets/TUSD", { key: proposer, body: {} }), 400, "invalid_request", "settlement");
    await expectRefused(
      t.api,
      () => t.api.call("PATCH", "/v1/assets/TUSD", { key: proposer, body: { settlement: erc20(TOKEN_C), scale: 18 } }),
      400,
      "invalid_request",
      "scale",
    );
    await expectRefused(t.api, () => patchAsset("TUSD", { ...erc20(TOKEN_C), vault: TOKEN_D }, proposer), 400, "invalid_request", "settlement.vault");
    await expectRefused(
      t.api,
      () => t.api.call("PATCH", "/v1/assets/TUSD", { key: proposer, body: { settlement: erc20(TOKEN_C) }, idempotencyKey: null }),
      400,
      "idempotency_key_required",
    );
    await expectRefused(t.api, () => patchAsset("TUSD", erc20("0x1234"), proposer), 400, "invalid_request", "settlement.token_address");
    await expectRefused(t.api, () => patchAsset("TUSD", erc20(TOKEN_B), proposer), 400, "invalid_request", "settlement");
    await expectRefused(t.api, () => patchAsset("TUSD", { kind: "native", chain_id: 31337 }, proposer), 400, "invalid_request", "settlement");
    expectStatus(await t.api.call("POST", "/v1/assets", { body: { code: "ETH", scale: 18, settlement: { kind: "native", chain_id: 31337 } } }), 201);
    await expectRefused(t.api, () => patchAsset("ETH", { kind: "offchain" }, proposer), 400, "invalid_request", "settlement");
    expectStatus(await t.api.call("POST", "/v1/assets", { body: { code: "OTHER", scale: 6, settlement: erc20(TOKEN_D) } }), 201);
    await expectRefused(t.api, () => patchAsset("TUSD", erc20(TOKEN_D), proposer), 409, "asset_exists");
    await expectRefused(t.api, () => patchAsset("NOPE", erc20(TOKEN_C), proposer), 404, "asset_not_found");
  });

  it("an approval after the asset changed otherwise is refused (proposal_outdated), and the proposal stays open to be rejected", async () => {
    const { proposer, approver } = await fourEyes(t.api);
    const toC = expectStatus(await patchAsset("TUSD", erc20(TOKEN_C), proposer), 202).body;
    const toA = expectStatus(await patchAsset("TUSD", erc20(TOKEN_A), proposer), 202).body;
    expect(toA.id).not.toBe(toC.id);
    // The same change asked again while open answers the open proposal.
    expect(expectStatus(await patchAsset("TUSD", erc20(TOKEN_C), proposer), 202).body.id).toBe(toC.id);
    expectStatus(await approve(toC.id, approver), 200);
    const stale = await expectRefused(t.api, () => approve(toA.id, approver), 409, "proposal_outdated");
    expect(stale.body.detail).toContain(`not as token ${TOKEN_B} on chain 31337`);
    expect(expectStatus(await t.api.call("GET", `/v1/proposals/${toA.id}`, { key: approver }), 200).body.status).toBe("proposed");
    expectStatus(await t.api.call("POST", `/v1/proposals/${toA.id}/reject`, { key: approver, body: { reason: "outdated" } }), 200);
    expect((await asset("TUSD")).settlement_history.map((v: { version: number }) => v.version)).toEqual([1, 2, 3]);
  });

  it("history and identity are kept by the database itself: versions are never edited, code and scale never change, retirement is final", async () => {
    await expect(t.api.db.query("update asset_settlements set token_address = $1", [TOKEN_D])).rejects.toThrow(/append-only/);
    await expect(t.api.db.query("delete from asset_settlements")).rejects.toThrow(/append-only/);
    await expect(t.api.db.query("update assets set scale = 18 where code = 'TUSD'")).rejects.toThrow(/only how an asset settles may change/);
    await expect(t.api.db.query("delete from assets where code = 'OTHER'")).rejects.toThrow(/cannot be deleted/);
  });
});

describe("payouts and a settlement change", () => {
  it("TUSD redeployed: its payouts are refused until the new token is approved, then asked for on it", async () => {
    const { proposer, approver } = await fourEyes(t.api);
    const wallet = privateKeyToAccount(generatePrivateKey());
    const ch = expectStatus(
      await t.api.call("POST", "/v1/operators/o1/payout-address-challenges", { key: t.w.keys.o1, body: { chain_id: 31337, address: wallet.address } }),
      201,
    ).body;
    // o1 has earnings waiting already: its first address takes a second key.
    const addressProposal = expectStatus(
      await t.api.call("PUT", "/v1/operators/o1/payout-address", {
        key: t.w.keys.o1,
        body: { chain_id: 31337, address: wallet.address, challenge_id: ch.id, signature: await wallet.signMessage({ message: ch.message }) },
      }),
      202,
    ).body;
    expectStatus(await t.api.call("POST", `/v1/proposals/${addressProposal.id}/approve`, { key: approver, body: {} }), 200);
    // o1 earns TUSD that the platform received.
    expectStatus(await t.api.call("POST", "/v1/customers/c1/deposits", { key: t.w.keys.m1, body: { asset: "TUSD", amount: "5000" } }), 201);
    const receipt = expectStatus(
      await t.api.call("POST", "/v1/marketplaces/m1/receipts", { key: t.w.keys.finance, body: { asset: "TUSD", amount: "5000", reference: "tusd m1" } }),
      201,
    ).body;
    expectStatus(await approve(receipt.id, t.w.keys.admin), 200);
    expectStatus(await t.api.call("POST", "/v1/usage", { key: t.w.keys.m1, body: usage({ asset: "TUSD" }) }), 201);

    // The database has TUSD as TOKEN_C, the chain's settings as TOKEN_B.
    const ask = () => t.api.call("POST", "/v1/payouts", { key: t.w.keys.o1, body: { asset: "TUSD", amount: "100" } });
    const unconfigured = await expectRefused(t.api, ask, 422, "chain_not_configured");
    expect(unconfigured.body.detail).toContain("PATCH /v1/assets/TUSD");
    const proposal = expectStatus(await patchAsset("TUSD", erc20(TOKEN_B), proposer), 202).body;
    expectStatus(await approve(proposal.id, approver), 200);
    const payout = expectStatus(await ask(), 201).body;
    expect(payout).toMatchObject({ status: "pending", asset: "TUSD", chain_id: 31337, to_address: wallet.address.toLowerCase() });
  });

  it("the change waits for payouts on their way: refused at the proposal and at the approval, with how many", async () => {
    const { proposer, approver } = await fourEyes(t.api);
    // USDC is paid out off-chain in this world: a pending payout of it is on its way.
    const payout = expectStatus(await t.api.call("POST", "/v1/payouts", { key: t.w.keys.o1, body: { asset: "USDC", amount: "100" } }), 201).body;
    const refused = await expectRefused(t.api, () => patchAsset("USDC", erc20(TOKEN_D, 5), proposer), 409, "payouts_in_flight");
    expect(refused.body.detail).toMatch(/^1 payout of asset USDC is on its way on the current settlement \(1 pending\)/);
    expectStatus(await t.api.call("POST", `/v1/payouts/${payout.id}/cancel`, { key: t.w.keys.o1 }), 200);
    // Proposed with none on its way; a payout asked for meanwhile holds the approval back until it ends.
    const proposal = expectStatus(await patchAsset("USDC", erc20(`0x${"e5".repeat(20)}`, 5), proposer), 202).body;
    const meanwhile = expectStatus(await t.api.call("POST", "/v1/payouts", { key: t.w.keys.o1, body: { asset: "USDC", amount: "100" } }), 201).body;
    await expectRefused(t.api, () => approve(proposal.id, approver), 409, "payouts_in_flight");
    expectStatus(await t.api.call("POST", `/v1/payouts/${meanwhile.id}/mark-paid`, { key: t.w.keys.finance, body: { reference: "wire 42" } }), 200);
    expectStatus(await approve(proposal.id, approver), 200);
    // Chain 5 has no settings here: its payouts are refused like any such asset's.
    await expectRefused(
      t.api,
      () => t.api.call("POST", "/v1/payouts", { key: t.w.keys.o1, body: { asset: "USDC", amount: "100" } }),
      422,
      "chain_not_configured",
    );
    const back = expectStatus(await patchAsset("USDC", { kind: "offchain" }, proposer), 202).body;
    expectStatus(await approve(back.id, approver), 200);
    expectStatus(await t.api.call("POST", "/v1/payouts", { key: t.w.keys.o1, body: { asset: "USDC", amount: "100" } }), 201);
    expect((await asset("USDC")).settlement_history.map((v: { settlement: { kind: string } }) => v.settlement.kind)).toEqual(["offchain", "erc20", "offchain"]);
    expect((await verifyLedger(t.api.db)).violations).toEqual([]);
  });
});

describe("names and metadata", () => {
  it("a marketplace: renamed by itself or an admin; another marketplace's answers 404; unknown fields and empty changes are 400", async () => {
    const renamed = expectStatus(await t.api.call("PATCH", "/v1/marketplaces/m1", { key: t.w.keys.m1, body: { name: "Market One" } }), 200).body;
    expect(renamed).toMatchObject({ id: "m1", name: "Market One", metadata: {} });
    expect(expectStatus(await t.api.call("GET", "/v1/marketplaces/m1", { key: t.w.keys.m1 }), 200).body.name).toBe("Market One");
    await expectRefused(
      t.api,
      () => t.api.call("PATCH", "/v1/marketplaces/m2", { key: t.w.keys.m1, body: { name: "mine now" } }),
      404,
      "marketplace_not_found",
    );
    const meta = expectStatus(await t.api.call("PATCH", "/v1/marketplaces/m2", { body: { metadata: { region: "eu" } } }), 200).body;
    expect(meta).toMatchObject({ name: "market m2", metadata: { region: "eu" } });
    await expectRefused(t.api, () => t.api.call("PATCH", "/v1/marketplaces/m1", { key: t.w.keys.m1, body: {} }), 400, "invalid_request");
    await expectRefused(t.api, () => t.api.call("PATCH", "/v1/marketplaces/m1", { key: t.w.keys.m1, body: { id: "m9" } }), 400, "invalid_request", "id");
    await expectRefused(t.api, () => t.api.call("PATCH", "/v1/marketplaces/m1", { key: t.w.keys.m1, body: { name: "" } }), 400, "invalid_request", "name");
    await expectRefused(t.api, () => t.api.call("PATCH", "/v1/marketplaces/nope", { body: { name: "x" } }), 404, "marketplace_not_found");
    for (const key of [t.w.keys.finance, t.w.keys.o1])
      await expectRefused(t.api, () => t.api.call("PATCH", "/v1/marketplaces/m1", { key, body: { name: "x" } }), 403, "forbidden");
  });

  it("an operator: renamed by itself or an admin, never by a marketplace or another operator", async () => {
    const o = expectStatus(await t.api.call("PATCH", "/v1/operators/o1", { key: t.w.keys.o1, body: { name: "Farm One", metadata: { gpus: 8 } } }), 200).body;
    expect(o).toMatchObject({ id: "o1", name: "Farm One", metadata: { gpus: 8 }, marketplace_ids: ["m1"] });
    await expectRefused(t.api, () => t.api.call("PATCH", "/v1/operators/o2", { key: t.w.keys.o1, body: { name: "mine" } }), 404, "operator_not_found");
    await expectRefused(t.api, () => t.api.call("PATCH", "/v1/operators/o1", { key: t.w.keys.m1, body: { name: "ours" } }), 403, "forbidden");
    await expectRefused(
      t.api,
      () => t.api.call("PATCH", "/v1/operators/o1", { key: t.w.keys.o1, body: { marketplace_ids: ["m2"] } }),
      400,
      "invalid_request",
      "marketplace_ids",
    );
    expectStatus(await t.api.call("PATCH", "/v1/operators/o2", { body: { name: "Farm Two" } }), 200);
  });

  it("a customer: its metadata, by its marketplace or an admin naming it; billing is not a description; another marketplace's is 404", async () => {
    const key = "patch-c1";
    const body = { metadata: { plan: "gold" } };
    const cu = expectStatus(await t.api.call("PATCH", "/v1/customers/c1", { key: t.w.keys.m1, body, idempotencyKey: key }), 200);
    expect(cu.body).toMatchObject({ marketplace_id: "m1", id: "c1", metadata: { plan: "gold" }, retired_at: null });
    const replay = expectStatus(await t.api.call("PATCH", "/v1/customers/c1", { key: t.w.keys.m1, body, idempotencyKey: key }), 200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    await expectRefused(
      t.api,
      () => t.api.call("PATCH", "/v1/customers/c1", { key: t.w.keys.m1, body: { metadata: {} }, idempotencyKey: key }),
      409,
      "idempotency_key_reused",
    );
    // m2's key: m1's customer c1 is m2's own c1, and m1only does not exist for it.
    await expectRefused(t.api, () => t.api.call("PATCH", "/v1/customers/m1only", { key: t.w.keys.m2, body }), 404, "customer_not_found");
    await expectRefused(t.api, () => t.api.call("PATCH", "/v1/customers/c1?marketplace_id=m1", { key: t.w.keys.m2, body }), 404, "customer_not_found");
    expect(expectStatus(await t.api.call("GET", "/v1/customers/c1", { key: t.w.keys.m2 }), 200).body.metadata).toEqual({});
    await expectRefused(t.api, () => t.api.call("PATCH", "/v1/customers/c1", { body }), 400, "invalid_request", "marketplace_id");
    expectStatus(await t.api.call("PATCH", "/v1/customers/c1?marketplace_id=m2", { body: { metadata: { plan: "basic" } } }), 200);
    await expectRefused(
      t.api,
      () => t.api.call("PATCH", "/v1/customers/c1", { key: t.w.keys.m1, body: { billing: "postpaid" } }),
      400,
      "invalid_request",
      "billing",
    );
    await expectRefused(t.api, () => t.api.call("PATCH", "/v1/customers/c1", { key: t.w.keys.m1, body: {} }), 400, "invalid_request", "metadata");
    await expectRefused(t.api, () => t.api.call("PATCH", "/v1/customers/c1", { key: t.w.keys.o1, body }), 403, "forbidden");
  });
});

describe("retiring", () => {
  it("a customer: no new usage, holds or prepaid deposits; its balance stays readable; a postpaid one still pays what it owes", async () => {
    const { m1 } = t.w.keys;
    expectStatus(await t.api.call("POST", "/v1/customers", { key: m1, body: { id: "leaving", billing: "prepaid" } }), 201);
    expectStatus(await t.api.call("POST", "/v1/customers/leaving/deposits", { key: m1, body: { asset: "USDC", amount: "5000" } }), 201);
    await expectRefused(t.api, () => t.api.call("POST", "/v1/customers/leaving/retire", { key: t.w.keys.m2 }), 404, "customer_not_found");
    await expectRefused(t.api, () => t.api.call("POST", "/v1/customers/leaving/retire", { key: t.w.keys.o1 }), 403, "forbidden");
    const retired = expectStatus(await t.api.call("POST", "/v1/customers/leaving/retire", { key: m1 }), 200).body;
    expect(retired.retired_at).toEqual(expect.any(String));
    expect(expectStatus(await t.api.call("POST", "/v1/customers/leaving/retire?marketplace_id=m1"), 200).body.retired_at).toBe(retired.retired_at);

    const refusal = await expectRefused(
      t.api,
      () => t.api.call("POST", "/v1/usage", { key: m1, body: usage({ customer_id: "leaving" }) }),
      409,
      "customer_retired",
    );
    expect(refusal.body.detail).toContain("customer leaving of marketplace m1 was retired");
    const batch = expectStatus(
      await t.api.call("POST", "/v1/usage/batch", { key: m1, body: { records: [usage({ customer_id: "leaving" }), usage()] } }),
      200,
    ).body;
    expect(batch.results.map((r: { status: string; code?: string }) => r.code ?? r.status)).toEqual(["customer_retired", "accepted"]);
    await expectRefused(
      t.api,
      () => t.api.call("POST", "/v1/holds", { key: m1, body: { customer_id: "leaving", asset: "USDC", amount: "10" } }),
      409,
      "customer_retired",
    );
    await expectRefused(
      t.api,
      () => t.api.call("POST", "/v1/customers/leaving/deposits", { key: m1, body: { asset: "USDC", amount: "1" } }),
      409,
      "customer_retired",
    );
    const read = expectStatus(await t.api.call("GET", "/v1/customers/leaving", { key: m1 }), 200).body;
    expect(read).toMatchObject({ retired_at: retired.retired_at, accounts: [{ asset: "USDC", posted: "5000" }] });

    // A postpaid customer owing money: retired, it takes no usage, but its deposits still settle what it owes.
    expectStatus(
      await t.api.call("POST", "/v1/customers", {
        key: m1,
        body: { id: "owing", billing: "postpaid", credit_limits: [{ asset: "USDC", credit_limit: "100000" }] },
      }),
      201,
    );
    expectStatus(await t.api.call("POST", "/v1/usage", { key: m1, body: usage({ customer_id: "owing" }) }), 201);
    expectStatus(await t.api.call("POST", "/v1/customers/owing/retire", { key: m1 }), 200);
    await expectRefused(t.api, () => t.api.call("POST", "/v1/usage", { key: m1, body: usage({ customer_id: "owing" }) }), 409, "customer_retired");
    expectStatus(await t.api.call("POST", "/v1/customers/owing/deposits", { key: m1, body: { asset: "USDC", amount: "1000" } }), 201);
    expect(expectStatus(await t.api.call("GET", "/v1/customers/owing", { key: m1 }), 200).body.accounts[0].posted).toBe("0");
  });

  it("an asset: no new accounts, transfers, usage, holds or deposits; what is in it is still held, received and paid out", async () => {
    const { m1, finance, admin, o1 } = t.w.keys;
    expectStatus(await t.api.call("POST", "/v1/assets", { body: { code: "OLD", scale: 2, settlement: { kind: "offchain" } } }), 201);
    const oldId = (await asset("OLD")).id;
    const account = async (ref: string, extra: Record<string, unknown> = {}) =>
      t.api.call("POST", "/v1/accounts", { key: m1, body: { asset_id: oldId, code: "wallet", normal_side: "credit", ref, ...extra } });
    const a = expectStatus(await account("old:a", { normal_side: "debit" }), 201).body;
    const b = expectStatus(await account("old:b"), 201).body;
    const moved = expectStatus(
      await t.api.call("POST", "/v1/transfers", { key: m1, body: { legs: [{ debit_account_id: a.id, credit_account_id: b.id, amount: "50" }] } }),
      201,
    ).body;
    expectStatus(await t.api.call("POST", "/v1/customers/c1/deposits", { key: m1, body: { asset: "OLD", amount: "5000" } }), 201);
    expectStatus(await t.api.call("POST", "/v1/usage", { key: m1, body: usage({ asset: "OLD" }) }), 201);
    const hold = expectStatus(await t.api.call("POST", "/v1/holds", { key: m1, body: { customer_id: "c1", asset: "OLD", amount: "10" } }), 201).body;

    await expectRefused(t.api, () => t.api.call("POST", "/v1/assets/OLD/retire", { key: m1 }), 403, "forbidden");
    await expectRefused(t.api, () => t.api.call("POST", "/v1/assets/NOPE/retire"), 404, "asset_not_found");
    const retired = expectStatus(await t.api.call("POST", "/v1/assets/OLD/retire"), 200).body;
    expect(retired).toMatchObject({ code: "OLD", retired_at: expect.any(String) });
    expect(expectStatus(await t.api.call("POST", "/v1/assets/OLD/retire"), 200).body.retired_at).toBe(retired.retired_at);
    const listed = expectStatus(await t.api.call("GET", "/v1/assets", { key: o1 }), 200).body.data;
    expect(listed.find((x: { code: string }) => x.code === "OLD").retired_at).toBe(retired.retired_at);

    // New business is refused, naming the asset.
    await expectRefused(t.api, () => account("old:c"), 409, "asset_retired");
    const transfer = await expectRefused(
      t.api,
      () => t.api.call("POST", "/v1/transfers", { key: m1, body: { legs: [{ debit_account_id: a.id, credit_account_id: b.id, amount: "1" }] } }),
      409,
      "asset_retired",
    );
    expect(transfer.body.detail).toMatch(/^asset OLD was retired at /);
    await expectRefused(t.api, () => t.api.call("POST", "/v1/usage", { key: m1, body: usage({ asset: "OLD" }) }), 409, "asset_retired");
    await expectRefused(
      t.api,
      () => t.api.call("POST", "/v1/holds", { key: m1, body: { customer_id: "c1", asset: "OLD", amount: "10" } }),
      409,
      "asset_retired",
    );
    await expectRefused(t.api, () => t.api.call("POST", "/v1/customers/c1/deposits", { key: m1, body: { asset: "OLD", amount: "1" } }), 409, "asset_retired");
    await expectRefused(
      t.api,
      () => t.api.call("POST", "/v1/customers", { key: m1, body: { id: "late", billing: "postpaid", credit_limits: [{ asset: "OLD", credit_limit: "5" }] } }),
      409,
      "asset_retired",
    );

    // What is in it is finished: the hold closed, the transfer reversed, the marketplace's payment
    // received, and the operator paid.
    expectStatus(await t.api.call("POST", `/v1/holds/${hold.id}/close`, { key: m1 }), 200);
    expectStatus(await t.api.call("POST", `/v1/transfers/${moved.id}/reverse`, { key: m1 }), 201);
    const receipt = expectStatus(
      await t.api.call("POST", "/v1/marketplaces/m1/receipts", { key: finance, body: { asset: "OLD", amount: "5000", reference: "old m1" } }),
      201,
    ).body;
    expectStatus(await approve(receipt.id, admin), 200);
    expectStatus(await t.api.call("POST", "/v1/payouts", { key: o1, body: { asset: "OLD", amount: "500" } }), 201);
    expect(expectStatus(await t.api.call("GET", `/v1/accounts/${b.id}/balance`, { key: m1 }), 200).body.posted).toBe("0");
    await expect(t.api.db.query("update assets set retired_at = null where code = 'OLD'")).rejects.toThrow(/retirement is final/);
    expect((await verifyLedger(t.api.db)).violations).toEqual([]);
  });
});

describe("on a real local chain", () => {
  it("TUSD redeployed at a new address: the change approved, a payout is paid in the new token and settles in the ledger", async () => {
    const world = await payoutWorld();
    try {
      const token = await world.chain.deployStablecoin();
      await world.chain.send({
        to: token,
        data: encodeFunctionData({ abi: TestStablecoin.abi, functionName: "mint", args: [world.chain.vault, 1_000_000_000n] }),
      });
      const assets = [
        { code: TOKEN, token, decimals: 6 },
        { code: "ETH", decimals: 18 },
      ];
      const redeployed = new Settlements(loadChains({ CHAINS: JSON.stringify([chainSettingsFor(world.chain, { assets })]) }, world.env));
      const api = await testApi({ db: world.db, settlements: redeployed });
      try {
        const op = await world.operator("farm", { [TOKEN]: 50_000_000n });
        const key = expectStatus(await api.call("POST", "/v1/api-keys", { body: { name: "farm", role: "operator", scope_id: "farm" } }), 201).body.secret;
        const ask = () => api.call("POST", "/v1/payouts", { key, body: { asset: TOKEN, amount: "20000000" } });
        await expectRefused(api, ask, 422, "chain_not_configured");
        const { proposer, approver } = await fourEyes(api);
        const proposal = expectStatus(
          await api.call("PATCH", `/v1/assets/${TOKEN}`, { key: proposer, body: { settlement: { kind: "erc20", chain_id: 31337, token_address: token } } }),
          202,
        ).body;
        expectStatus(await api.call("POST", `/v1/proposals/${proposal.id}/approve`, { key: approver, body: {} }), 200);
        const payout = expectStatus(await ask(), 201).body;
        const [done] = await world.drive([payout.id], [world.worker({ chainOverrides: { assets } })]);
        expect(done).toMatchObject({ status: "confirmed" });
        const paid = await world.chain.public.readContract({ address: token, abi: TestStablecoin.abi, functionName: "balanceOf", args: [op.address] });
        expect(paid).toBe(20_000_000n);
        expect(await world.chain.tokenBalance(op.address)).toBe(0n);
        expect((await verifyLedger(world.db)).violations).toEqual([]);
      } finally {
        await api.close();
      }
    } finally {
      await world.close();
    }
  });
});
