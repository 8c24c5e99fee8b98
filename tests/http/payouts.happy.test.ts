import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { afterEach, describe, expect, it } from "vitest";
import { expectStatus, testApi, type TestApi, proposeAndApprove } from "../support/http.js";
import { payoutWorld, TOKEN, type PayoutWorld } from "../support/payout-world.js";

let w: PayoutWorld | undefined;
let api: TestApi | undefined;
afterEach(async () => {
  await api?.close();
  await w?.close();
  w = undefined;
  api = undefined;
});

async function setup(chainOverrides: Record<string, unknown> = {}) {
  w = await payoutWorld({ chainOverrides });
  api = await testApi({ db: w.db, settlements: w.settlements });
  const key = async (role: string, scope_id?: string) =>
    expectStatus(await api!.call("POST", "/v1/api-keys", { body: { name: role, role, scope_id } }), 201).body.secret as string;
  return { w, api, key };
}

/** Proves `account` as the operator's payout address; a change carries the current address's agreement (`current`). */
async function proveAddress(api: TestApi, key: string, operatorId: string, account = privateKeyToAccount(generatePrivateKey()), current?: PrivateKeyAccount) {
  const ch = expectStatus(
    await api.call("POST", `/v1/operators/${operatorId}/payout-address-challenges`, { key, body: { chain_id: 31337, address: account.address } }),
    201,
  ).body;
  expect(ch.message).toContain(account.address);
  expect(ch.message).toContain(operatorId);
  const body = { chain_id: 31337, address: account.address, challenge_id: ch.id, signature: await account.signMessage({ message: ch.message }) };
  const agreed = current ? { current_address_signature: await current.signMessage({ message: ch.message }) } : {};
  const res = await api.call("PUT", `/v1/operators/${operatorId}/payout-address`, { key, body: { ...body, ...agreed } });
  return { account, res: expectStatus(res, 200) };
}

describe("payouts over HTTP", () => {
  it("an operator proves its address, asks for a payout, follows it to confirmed, and sees its balances", async () => {
    const { w, api, key } = await setup();
    const { registerOperator } = await import("../../src/services/marketplaces.js");
    await registerOperator(w.db, { id: "op1", name: "GPU farm" });
    const op = await key("operator", "op1");
    // The operator's own first address, before anything is owed to it.
    const first = await proveAddress(api, op, "op1");
    await w.credit("op1", TOKEN, 50_000_000n);
    expect(first.res.body).toMatchObject({ operator_id: "op1", chain_id: 31337, address: first.account.address.toLowerCase(), changed: true });
    // A change of address is recorded with who made it.
    const second = await proveAddress(api, op, "op1", undefined, first.account);
    const addresses = expectStatus(await api.call("GET", "/v1/operators/op1/payout-addresses", { key: op }), 200).body;
    expect(addresses.data).toEqual([{ chain_id: 31337, address: second.account.address.toLowerCase(), verified_at: expect.any(String) }]);
    expect(addresses.history).toHaveLength(2);
    expect(addresses.history[0]).toMatchObject({ old_address: first.account.address.toLowerCase(), new_address: second.account.address.toLowerCase() });

    const created = await api.call("POST", "/v1/payouts", { key: op, body: { asset: TOKEN, amount: "20000000" }, idempotencyKey: "payout-1" });
    expectStatus(created, 201);
    expect(created.body).toMatchObject({
      operator_id: "op1",
      asset: TOKEN,
      amount: "20000000",
      status: "pending",
      settlement: "evm",
      chain_id: 31337,
      to_address: second.account.address.toLowerCase(),
    });
    // A retry with the same key is the same payout.
    const retry = await api.call("POST", "/v1/payouts", { key: op, body: { asset: TOKEN, amount: "20000000" }, idempotencyKey: "payout-1" });
    expect(retry.body.id).toBe(created.body.id);
    let balances = expectStatus(await api.call("GET", "/v1/operators/op1/balances", { key: op }), 200).body.data[0];
    expect(balances).toMatchObject({ available: "30000000", pending: "20000000", in_transit: "0", paid_out: "0" });

    const worker = w.worker();
    await worker.tick(); // submitted, waiting for confirmations
    balances = expectStatus(await api.call("GET", "/v1/operators/op1/balances", { key: op }), 200).body.data[0];
    expect(balances).toMatchObject({ available: "30000000", pending: "0", in_transit: "20000000", paid_out: "0" });
    await w.drive([created.body.id]);
    const done = expectStatus(await api.call("GET", `/v1/payouts/${created.body.id}`, { key: op }), 200).body;
    expect(done).toMatchObject({
      status: "confirmed",
      tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      log_index: expect.any(Number),
      settle_transfer_id: expect.any(String),
    });
    expect(await w.chain.tokenBalance(second.account.address)).toBe(20_000_000n);
    balances = expectStatus(await api.call("GET", "/v1/operators/op1/balances", { key: op }), 200).body.data[0];
    expect(balances).toMatchObject({ available: "30000000", pending: "0", in_transit: "0", paid_out: "20000000" });
    const list = expectStatus(await api.call("GET", "/v1/payouts?status=confirmed&asset=TUSD", { key: op }), 200).body;
    expect(list.data.map((p: { id: string }) => p.id)).toEqual([created.body.id]);
    expect(expectStatus(await api.call("GET", "/v1/payouts?status=pending", { key: op }), 200).body.data).toEqual([]);
  });

  it("50 concurrent payout requests by one operator never hold more than its available balance", async () => {
    const { w, api, key } = await setup();
    const { registerOperator } = await import("../../src/services/marketplaces.js");
    await registerOperator(w.db, { id: "busy", name: "busy" });
    const op = await key("operator", "busy");
    await proveAddress(api, op, "busy");
    await w.credit("busy", TOKEN, 1_000n);
    const answers = await Promise.all(Array.from({ length: 50 }, () => api.call("POST", "/v1/payouts", { key: op, body: { asset: TOKEN, amount: "30" } })));
    const ok = answers.filter((r) => r.status === 201);
    const refused = answers.filter((r) => r.status !== 201);
    expect(ok).toHaveLength(33); // 33 × 30 = 990 ≤ 1,000 < 34 × 30
    for (const r of refused) expect(r.body.code).toBe("exceeds_credits");
    const b = await w.balance("operator:busy:payable", TOKEN);
    expect(b.debitsPending).toBe(990n);
    expect(b.credits - b.debits - b.debitsPending).toBe(10n);
    const [{ n }] = (await w.db.query<{ n: string }>("select count(*)::text as n from payouts where operator_id = 'busy'")) as [{ n: string }];
    expect(n).toBe("33");
  });

  it("off-chain settlement: finance marks a payout paid with its reference; a pending payout can be cancelled", async () => {
    const { w, api, key } = await setup();
    const { createAsset } = await import("../../src/services/create-asset.js");
    const { registerOperator } = await import("../../src/services/marketplaces.js");
    await createAsset(w.db, { code: "EUR", scale: 2, settlement: { kind: "offchain" } });
    await registerOperator(w.db, { id: "bank-op", name: "paid by wire" });
    await w.credit("bank-op", "EUR", 100_00n);
    const finance = await key("finance");
    const p = expectStatus(await api.call("POST", "/v1/payouts", { key: finance, body: { operator_id: "bank-op", asset: "EUR", amount: "6000" } }), 201).body;
    expect(p).toMatchObject({ settlement: "none", chain_id: null, to_address: null, status: "pending" });
    const paid = expectStatus(await api.call("POST", `/v1/payouts/${p.id}/mark-paid`, { key: finance, body: { reference: "SEPA-0042" } }), 200).body;
    expect(paid).toMatchObject({ status: "confirmed", external_reference: "SEPA-0042" });
    expect((await w.balance("treasury:offchain", "EUR")).credits).toBe(6000n);
    expect(await w.balance("operator:bank-op:payable", "EUR")).toEqual({ debits: 6000n, credits: 10000n, debitsPending: 0n, creditsPending: 0n });
    // Another payout, cancelled: the hold is voided and the money available again.
    const q = expectStatus(await api.call("POST", "/v1/payouts", { key: finance, body: { operator_id: "bank-op", asset: "EUR", amount: "4000" } }), 201).body;
    const cancelled = expectStatus(await api.call("POST", `/v1/payouts/${q.id}/cancel`, { key: finance }), 200).body;
    expect(cancelled).toMatchObject({ status: "failed", failure_reason: expect.stringMatching(/^cancelled/) });
    expect(await w.balance("operator:bank-op:payable", "EUR")).toEqual({ debits: 6000n, credits: 10000n, debitsPending: 0n, creditsPending: 0n });
    expect((await api.call("POST", `/v1/payouts/${q.id}/mark-paid`, { key: finance, body: { reference: "late" } })).status).toBe(409);
  });

  it("scheduled payouts: once per operator and interval; a gas cap holds back payouts that gas would eat", async () => {
    const { w, api } = await setup();
    const a = await w.operator("sched-a", { [TOKEN]: 5_000_000n });
    const b = await w.operator("sched-b", { [TOKEN]: 10n });
    await w.operator("sched-c", {});
    await proposeAndApprove(api, "PUT", `/v1/payout-policies/${TOKEN}`, { min_amount: "1000", schedule: "interval", interval_seconds: 3600 });
    const worker = w.worker();
    expect(await worker.schedule()).toBe(1); // sched-b is below the minimum, sched-c has nothing
    expect(await worker.schedule()).toBe(0); // same window: nothing new
    const [p] = (await api.call("GET", "/v1/payouts?operator_id=sched-a")).body.data;
    expect(p).toMatchObject({ trigger: "schedule", amount: "5000000", status: "pending" });
    await w.drive([p.id]);
    expect(await w.chain.tokenBalance(a.address)).toBe(5_000_000n);
    expect(await w.chain.tokenBalance(b.address)).toBe(0n);

    // Native token, gas capped at 0.01%: a tiny payout waits, with the reason on it.
    const n = await w.operator("native-op", { ETH: 10n ** 18n });
    await proposeAndApprove(api, "PUT", "/v1/payout-policies/ETH", { min_amount: "1", schedule: "manual", max_gas_share_bps: 1 });
    const small = expectStatus(await api.call("POST", "/v1/payouts", { body: { operator_id: n.id, asset: "ETH", amount: "1000000" } }), 201).body;
    const big = expectStatus(await api.call("POST", "/v1/payouts", { body: { operator_id: n.id, asset: "ETH", amount: String(10n ** 17n * 9n) } }), 201).body;
    await worker.tick();
    const held = expectStatus(await api.call("GET", `/v1/payouts/${small.id}`), 200).body;
    expect(held).toMatchObject({ status: "pending", note: expect.stringMatching(/gas/) });
    const [bigDone] = await w.drive([big.id]);
    expect(bigDone!.status).toBe("confirmed");
    expect((await api.call("GET", `/v1/payouts/${small.id}`)).body.status).toBe("pending");
    // Lifting the cap lets it go.
    await proposeAndApprove(api, "PUT", "/v1/payout-policies/ETH", { min_amount: "1", schedule: "manual" });
    const [smallDone] = await w.drive([small.id]);
    expect(smallDone!.status).toBe("confirmed");
    const policies = expectStatus(await api.call("GET", "/v1/payout-policies"), 200).body.data;
    expect(policies.find((x: { asset: string }) => x.asset === TOKEN)).toMatchObject({ schedule: "interval", interval_seconds: 3600, min_amount: "1000" });
  });
});
