import { parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { depositAddressMessage } from "../../src/domain/payouts.js";
import { afterEach, describe, expect, it } from "vitest";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { onRealPostgres } from "../support/db.js";
import { fundingWorld, payVault, USD, type FundingWorld } from "../support/funding-world.js";
import { expectStatus, proposeAndApprove } from "../support/http.js";
import { TOKEN } from "../support/payout-world.js";

let world: FundingWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});
const setup = async () => (world = await fundingWorld());

describe("attacks on funded payouts and four eyes", () => {
  it("an admin alone cannot approve its own proposal through keys it creates, directly or through another admin key", async () => {
    const s = await setup();
    // The marketplace claims an off-chain deposit for customer c and spends it on usage of operator o: unfunded.
    await s.deposit("c", 1_000n * USD, s.keys.market);
    await s.usage("o", "c", 1_000n * USD);
    expectStatus(await s.payout("o", 890n * USD), 422);
    // A person's admin key proposes a settlement that never arrived ...
    const admin = await s.key("admin");
    const call = (method: string, path: string, body: unknown, key: string) => s.api.call(method, path, { key, body });
    const proposal = expectStatus(
      await call("POST", "/v1/marketplaces/m/receipts", { asset: TOKEN, amount: (1_000n * USD).toString(), reference: "no such wire" }, admin),
      201,
    ).body;
    expect((await s.approve(proposal.id, admin)).body.code).toBe("four_eyes");
    // ... mints a second key for itself, and a key through another admin key it minted: neither may approve.
    const puppet = expectStatus(await call("POST", "/v1/api-keys", { name: "puppet", role: "finance" }, admin), 201).body.secret as string;
    expect((await s.approve(proposal.id, puppet)).body).toMatchObject({ status: 403, code: "four_eyes" });
    const deputy = expectStatus(await call("POST", "/v1/api-keys", { name: "deputy", role: "admin" }, admin), 201).body.secret as string;
    const puppet2 = expectStatus(await call("POST", "/v1/api-keys", { name: "puppet 2", role: "finance" }, deputy), 201).body.secret as string;
    expect((await s.approve(proposal.id, puppet2)).body).toMatchObject({ status: 403, code: "four_eyes" });
    expect((await s.approve(proposal.id, deputy)).body).toMatchObject({ status: 403, code: "four_eyes" });
    // Nor the bootstrap key, through which every key was made.
    expect((await s.approve(proposal.id, "test-admin-key-0123456789abcdef")).body).toMatchObject({ status: 403, code: "four_eyes" });
    expectStatus(await s.payout("o", 1n), 422);
    expect(await s.w.chain.tokenBalance(s.wallets.o!)).toBe(0n);
    // The same for a credit limit.
    const limit = expectStatus(
      await call("POST", "/v1/marketplaces/m/credit-limits", { asset: TOKEN, credit_limit: (1_000n * USD).toString() }, admin),
      201,
    ).body;
    expect((await s.approve(limit.id, puppet)).body.code).toBe("four_eyes");
    expectStatus(await s.payout("o", 1n), 422);
    // A key the bootstrap key gave another person may.
    expectStatus(await s.approve(limit.id, s.keys.finance!), 200);
    expectStatus(await s.payout("o", 890n * USD), 201);
  });

  it("no key alone moves the service's accounts by hand: an admin's transfer into an operator's payable is refused, and a receipt is not reversed through the transfer routes", async () => {
    const s = await setup();
    await s.settle(100n * USD, "c wire", "c");
    await s.usage("o", "c", 100n * USD);
    const admin = await s.key("admin");
    const asset = (await s.w.db.query<{ id: string }>("select id from assets where code = $1", [TOKEN]))[0]!;
    const equity = expectStatus(
      await s.api.call("POST", "/v1/accounts", { key: admin, body: { asset_id: asset.id, code: "equity", normal_side: "debit", ref: "equity:owner" } }),
      201,
    ).body;
    const payable = (await s.w.db.query<{ id: string }>("select id from accounts where ref = 'operator:o:payable' and opened_by_service"))[0]!;
    const before = (await s.balance("o")).available;
    const refused = await s.api.call("POST", "/v1/transfers", {
      key: admin,
      body: { legs: [{ debit_account_id: equity.id, credit_account_id: payable.id, amount: (1_000n * USD).toString() }] },
    });
    expect(refused.body).toMatchObject({ status: 403, code: "forbidden" });
    expect((await s.balance("o")).available).toBe(before);
    const receiptTransfer = (await s.w.db.query<{ transfer_id: string }>("select transfer_id from funds_receipts"))[0]!.transfer_id;
    expect((await s.api.call("POST", `/v1/transfers/${receiptTransfer}/reverse`, { key: admin, body: {} })).status).toBeGreaterThanOrEqual(400);
    expect(await s.w.db.query("select 1 from transfers where reverses_id = $1", [receiptTransfer])).toEqual([]);
  });

  it("receipt references: reuse is refused, whatever the spelling of one wire", async () => {
    const s = await setup();
    await s.settle(100n * USD, "WIRE-2026-0042");
    expectStatus(await s.receipt(100n * USD, "WIRE-2026-0042"), 409);
    for (const variant of ["wire-2026-0042", "WIRE-2026-0042 ", " WIRE-2026-0042", "WIRE 2026 0042", "wire/2026/0042"]) {
      expect((await s.receipt(100n * USD, variant)).body, variant).toMatchObject({ status: 409, code: "receipt_exists" });
    }
    // The same reference on another marketplace is refused (dup check is global per asset).
    expectStatus(await s.receipt(100n * USD, "WIRE-2026-0042", undefined, s.keys.finance, "b"), 409);
  });

  it("a receipt for a customer of another marketplace is refused", async () => {
    const s = await setup();
    expectStatus(await s.receipt(100n * USD, "x1", "bc"), 404); // bc is b's customer, receipt on m
  });

  it("a finance key cannot propose a credit limit, nor approve its own receipt, nor can marketplace/operator keys decide", async () => {
    const s = await setup();
    expectStatus(await s.api.call("POST", "/v1/marketplaces/m/credit-limits", { key: s.keys.finance, body: { asset: TOKEN, credit_limit: "1" } }), 403);
    const r = expectStatus(await s.receipt(1n, "self"), 201).body;
    expect((await s.approve(r.id, s.keys.finance!)).body.code).toBe("four_eyes");
    expectStatus(await s.approve(r.id, s.keys.market!), 403);
    expectStatus(await s.approve(r.id, s.keys.o!), 403);
    expectStatus(await s.api.call("POST", `/v1/proposals/${r.id}/reject`, { key: s.keys.finance, body: { reason: "x" } }), 403);
  });

  it("a marketplace that links an honest operator it does not own cannot shrink the honest operator's payable", async () => {
    const s = await setup();
    // honest earns 890 in m, funded by m's settlement.
    await s.deposit("c", 1_000n * USD);
    await s.usage("honest", "c", 1_000n * USD);
    await s.settle(1_000n * USD, "m settles");
    expect((await s.balance("honest")).payable_now).toBe((890n * USD).toString());
    // Marketplace b asks to sell for honest, honest accepts; b posts unfunded usage for it, and reverses some of it.
    expectStatus(await s.api.call("POST", "/v1/operators", { key: s.keys.b, body: { id: "honest", name: "honest" } }), 202);
    expectStatus(await s.api.call("POST", "/v1/operators/honest/invitations/b/accept", { key: s.keys.honest, body: {} }), 200);
    await s.deposit("bc", 5_000n * USD, s.keys.b);
    const u1 = await s.usage("honest", "bc", 2_000n * USD, { key: s.keys.b });
    await s.usage("honest", "bc", 2_000n * USD, { key: s.keys.b });
    expect((await s.balance("honest")).payable_now).toBe((890n * USD).toString());
    expectStatus(await s.api.call("POST", `/v1/usage/${u1.id}/reverse`, { key: s.keys.b, body: { reason: "x" } }), 201);
    expect((await s.balance("honest")).payable_now).toBe((890n * USD).toString());
    // b cannot reverse m's usage.
    const mUsage = (await s.w.db.query<{ id: string }>("select id from usage_records where marketplace_id = 'm'"))[0]!.id;
    expectStatus(await s.api.call("POST", `/v1/usage/${mUsage}/reverse`, { key: s.keys.b, body: { reason: "x" } }), 404);
    expectStatus(await s.payout("honest", 890n * USD), 201);
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
  });

  it("holds: usage charged to a hold of claimed (unsettled) money is not payable, through close and reversal", async () => {
    const s = await setup();
    await s.deposit("c", 1_000n * USD);
    const hold = expectStatus(
      await s.api.call("POST", "/v1/holds", { key: s.keys.market, body: { customer_id: "c", asset: TOKEN, amount: (1_000n * USD).toString() } }),
      201,
    ).body;
    const u = await s.usage("o", "c", 600n * USD, { extra: { hold_id: hold.id } });
    expectStatus(await s.api.call("POST", `/v1/holds/${hold.id}/close`, { key: s.keys.market, body: {} }), 200);
    expect((await s.balance("o")).payable_now).toBe("0");
    expectStatus(await s.api.call("POST", `/v1/usage/${u.id}/reverse`, { key: s.keys.market, body: { reason: "x" } }), 201);
    await s.usage("o", "c", 1_000n * USD);
    expect((await s.balance("o")).payable_now).toBe("0");
    expectStatus(await s.payout("o", 1n), 422);
  });

  it("holds: a customer's own received money, charged through a hold, reversed and spent again, is paid once", async () => {
    const s = await setup();
    await s.settle(100n * USD, "c wire", "c");
    await s.deposit("c", 100n * USD); // claimed, unsettled
    const hold = expectStatus(
      await s.api.call("POST", "/v1/holds", { key: s.keys.market, body: { customer_id: "c", asset: TOKEN, amount: (100n * USD).toString() } }),
      201,
    ).body;
    const u = await s.usage("o", "c", 100n * USD, { extra: { hold_id: hold.id } });
    expectStatus(await s.payout("o", 89n * USD), 201);
    // Pad o with unfunded usage, then try to reverse the funded record and respend it for o2.
    await s.usage("o", "p", 100n * USD);
    expectStatus(await s.api.call("POST", `/v1/usage/${u.id}/reverse`, { key: s.keys.market, body: { reason: "x" } }), 422);
    await s.usage("o2", "c", 100n * USD);
    expectStatus(await s.payout("o2", 1n), 422);
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
  });

  it("parallel payouts of one operator never take more than its payable now", async () => {
    const s = await setup();
    await s.deposit("c", 1_000n * USD);
    await s.usage("o", "c", 1_000n * USD);
    await s.settle(500n * USD, "half"); // 445 payable of 890
    const rs = await Promise.all(Array.from({ length: 12 }, () => s.payout("o", 100n * USD)));
    expect(rs.filter((r) => r.status === 201).length).toBe(4);
    expect(rs.filter((r) => r.status !== 201).every((r) => r.body.code === "payout_unfunded")).toBe(true);
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
  });

  it("parallel reversals and payouts do not let a funded record's money be paid twice", async () => {
    const s = await setup();
    await s.settle(300n * USD, "c own", "c");
    await s.deposit("c", 1_000n * USD);
    const us = [];
    for (let i = 0; i < 3; i++) us.push(await s.usage("o", "c", 100n * USD));
    await s.usage("o", "p", 300n * USD); // padding
    await s.usage("o2", "c", 300n * USD); // would get c's money if o's records were reversed
    const ops = [
      ...us.map((u) => s.api.call("POST", `/v1/usage/${u.id}/reverse`, { key: s.keys.market, body: { reason: "x" } })),
      s.payout("o", 267n * USD),
      s.payout("o", 89n * USD),
      s.payout("o", 178n * USD),
    ];
    await Promise.all(ops);
    const o2 = await s.balance("o2");
    if (BigInt(o2.payable_now) > 0n) expectStatus(await s.payout("o2", BigInt(o2.payable_now)), 201);
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
  });

  it("scheduled payouts pay only what is funded", async () => {
    const s = await setup();
    await s.deposit("c", 1_000n * USD);
    await s.usage("o", "c", 1_000n * USD);
    await s.usage("honest", "p", 1_000n * USD);
    await s.settle(500n * USD, "half");
    await proposeAndApprove(s.api, "PUT", `/v1/payout-policies/${TOKEN}`, { min_amount: "1", schedule: "interval", interval_seconds: 60 });
    await s.w.worker().schedule();
    const paid = await s.w.db.query<{ operator_id: string; amount: string }>("select operator_id, amount::text from payouts order by operator_id");
    expect(paid).toEqual([{ operator_id: "o", amount: (445n * USD).toString() }]);
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
  });
});

describe("money received on chain is counted once", () => {
  it("a marketplace's on-chain settlement, recorded as a receipt with its tx hash, is not counted again as a customer deposit once the marketplace registers its wallet and finance reconciles", async () => {
    const s = await setup();
    // The marketplace owes for claimed deposits spent on usage of its operators o and o2.
    await s.deposit("c", 1_000n * USD);
    await s.deposit("d", 1_000n * USD);
    await s.usage("o", "c", 1_000n * USD);
    await s.usage("o2", "d", 1_000n * USD);
    // It settles 1,000 TUSD on chain from its own wallet X (docs/ledger.md: "record them as a receipt with the transaction hash as reference").
    const x = privateKeyToAccount(generatePrivateKey());
    await s.w.chain.test.setBalance({ address: x.address, value: parseEther("1") });
    const hash = await payVault(s, x, 1_000n * USD);
    await s.w.worker().tick(); // scanner: X is not registered, nothing credited
    await s.settle(1_000n * USD, hash); // finance records it, a second key approves: honest, the money is in the vault
    expect((await s.balance("o")).payable_now).toBe((890n * USD).toString());
    expect((await s.balance("o2")).payable_now).toBe("0");
    // The marketplace now registers X as its customer d's deposit address (it holds X's key) ...
    const signature = await x.signMessage({ message: depositAddressMessage({ marketplaceId: "m", customerId: "d", chainId: 31337n, address: x.address }) });
    expectStatus(
      await s.api.call("POST", "/v1/customers/d/deposit-addresses", { key: s.keys.market, body: { chain_id: 31337, address: x.address, signature } }),
      201,
    );
    // ... and finance's routine reconciliation over the range credits the same transfer to d as d's own money.
    const head = Number(await s.w.chain.public.getBlockNumber());
    expectStatus(
      await s.api.call("POST", "/v1/reconciliations", { key: s.keys.finance, body: { chain_id: 31337, asset: TOKEN, from_block: 0, to_block: head - 1 } }),
      201,
    );
    // The transfer was recorded as a receipt: it is not credited to d as well, and the reconciliation says so.
    expect(await s.w.db.query("select tx_hash from chain_deposits")).toEqual([]);
    const run = (await s.w.db.query<{ id: string }>("select id from reconciliations order by created_at desc limit 1"))[0]!;
    const items = expectStatus(await s.api.call("GET", `/v1/reconciliations/${run.id}?status=matched`, { key: s.keys.finance }), 200).body.items;
    expect(items.find((i: { tx_hash: string }) => i.tx_hash === hash.toLowerCase())).toMatchObject({
      detail: expect.stringContaining("recorded as a receipt"),
    });
    expect((await s.balance("o2")).payable_now).toBe("0");
    expectStatus(await s.payout("o2", 1n), 422);
    // The other way round: a payment the scanner credited to d cannot be recorded as a receipt again.
    const second = await payVault(s, x, 500n * USD);
    await s.w.worker().tick();
    expect(await s.w.db.query<{ tx_hash: string }>("select tx_hash from chain_deposits")).toEqual([{ tx_hash: second.toLowerCase() }]);
    expect((await s.receipt(500n * USD, second)).body).toMatchObject({ status: 409, code: "receipt_exists" });
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
  });
});

describe.skipIf(!onRealPostgres)("funding under real concurrency [TEST_DATABASE_URL]", () => {
  it("a receipt proposed while the scanner credits the same on-chain payment: the payment is counted once", async () => {
    const s = await setup();
    const x = privateKeyToAccount(generatePrivateKey());
    await s.w.chain.test.setBalance({ address: x.address, value: parseEther("1") });
    const signature = await x.signMessage({ message: depositAddressMessage({ marketplaceId: "m", customerId: "d", chainId: 31337n, address: x.address }) });
    expectStatus(
      await s.api.call("POST", "/v1/customers/d/deposit-addresses", { key: s.keys.market, body: { chain_id: 31337, address: x.address, signature } }),
      201,
    );
    await s.w.worker().tick();
    for (let round = 0; round < 6; round++) {
      const hash = await payVault(s, x, 10n * USD);
      // Finance records the payment as the marketplace's settlement while the scanner credits it to d.
      const [tick, proposed] = await Promise.all([s.w.worker().tick(), s.receipt(10n * USD, hash)]);
      void tick;
      const credited = (await s.w.db.query("select 1 from chain_deposits where tx_hash = $1", [hash.toLowerCase()])).length;
      const recorded = proposed.status === 201 ? 1 : 0;
      expect(credited + recorded, `round ${round}: credited ${credited}, receipt ${proposed.status} ${JSON.stringify(proposed.body)}`).toBe(1);
      if (recorded === 0) expect(proposed.body.code).toBe("receipt_exists");
    }
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
  });

  it("concurrent proposals of one reference: exactly one is recorded", async () => {
    const s = await setup();
    for (let round = 0; round < 5; round++) {
      const rs = await Promise.all(Array.from({ length: 16 }, () => s.receipt(1_000n * USD, `wire 77-${round}`)));
      const created = rs.filter((r) => r.status === 201);
      expect(created).toHaveLength(1);
      expect(rs.filter((r) => r.status !== 201).every((r) => r.body.code === "receipt_exists")).toBe(true);
      expectStatus(await s.approve(created[0]!.body.id, s.keys.finance2!), 200);
    }
    expect((await s.w.db.query("select 1 from funds_receipts")).length).toBe(5);
  });

  it("usage written while a payout is judged never takes the pool money that funded the paid record: one settlement is paid out once", async () => {
    const s = await setup();
    // m's pool: one real settlement of 100 TUSD. Customers c and d spend claimed (unsettled) deposits.
    await s.settle(100n * USD, "m settlement 1");
    await s.deposit("c", 100_000n * USD);
    await s.deposit("d", 100_000n * USD);
    // Open every account once (funded by the customers' own money, so the pool is untouched).
    await s.settle(2n * USD, "c own", "c");
    await s.settle(2n * USD, "d own", "d");
    await s.usage("o", "c", 2n * USD);
    await s.usage("o2", "d", 2n * USD);
    const base = { o2: BigInt((await s.balance("o2")).payable_now) }; // 1.78 TUSD of d's own money

    // A: a large batch for the attacker's operator o2; its record ids are drawn when it is planned.
    const N = 6000;
    const batch = Array.from({ length: N }, () => s.record("o2", "d", 1n * USD));
    const a = s.api.call("POST", "/v1/usage/batch", { key: s.keys.market, body: { records: batch } });
    // Wait until A's write transaction is under way (its transfers are being inserted).
    for (let i = 0; i < 400; i++) {
      const busy = await s.w.db.query<{ n: string }>(
        "select count(*)::text as n from pg_stat_activity where datname = current_database() and state <> 'idle' and query ilike '%unnest%' and pid <> pg_backend_pid()",
      );
      if (Number(busy[0]!.n) > 0) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    // B: one record for o, drawn later, committed first; o is paid from the pool at once.
    await s.usage("o", "c", 100n * USD);
    const first = await s.payout("o", 89n * USD);
    const ar = await a;
    expect(ar.status).toBeLessThan(300);
    // Whichever records the pool funds, it funds them once: the payout judged first waited for the
    // batch being written, and usage written after it is funded after what it saw.
    const o2 = await s.balance("o2");
    const left = BigInt(o2.payable_now) - base.o2;
    const second = left > 0n ? await s.payout("o2", left) : undefined;
    const paidFromPool = (first.status === 201 ? 89n * USD : 0n) + (second?.status === 201 ? left : 0n);
    expect(paidFromPool).toBeLessThanOrEqual(89n * USD);
    expect(first.status === 201 || second?.status === 201).toBe(true);
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
  }, 120_000);
});
