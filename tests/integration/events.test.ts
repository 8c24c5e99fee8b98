import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeLedgerContext, createLedgerContext, type LedgerContext } from "../../src/services/context.js";
import { ingestUsage } from "../../src/services/ingest-usage.js";
import { closeHold, openHold } from "../../src/services/holds.js";
import { eventsAfter, type EventRow } from "../../src/db/queries/events.js";
import { relayAllEvents, relayEvents } from "../../src/db/event-relay.js";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { freshDatabase, NEEDS_PG, onRealPostgres, type TestDatabase } from "../support/db.js";
import { createBalanceMonitor } from "../../src/services/balance-monitors.js";
import { depositForCustomer } from "../../src/services/customer-deposits.js";
import type { Principal } from "../../src/domain/access.js";
import { usageWorld, type UsageWorld } from "../support/usage-world.js";

let db: TestDatabase;
let ctx: LedgerContext;
beforeAll(async () => {
  db = await freshDatabase();
  ctx = createLedgerContext(db, { maxConcurrent: 4 });
});
afterAll(async () => {
  await closeLedgerContext(ctx);
  expect((await verifyLedger(db)).violations).toEqual([]);
  await db.destroy();
});

/** Everything after `after`, page by page (a client catching up). */
async function readAll(after = 0n, f: Partial<Parameters<typeof eventsAfter>[1]> = {}, limit = 3): Promise<EventRow[]> {
  const out: EventRow[] = [];
  for (let cursor = after; ;) {
    const page = await eventsAfter(db, { after: cursor, limit, ...f });
    out.push(...page);
    if (page.length < limit) return out;
    cursor = page[page.length - 1]!.position;
  }
}

const finance: Principal = { keyId: "finance-test", role: "finance", scopeId: null };
let deposits = 0;
async function deposit(w: UsageWorld, amount: bigint): Promise<void> {
  const r = await depositForCustomer(ctx, {
    marketplaceId: w.m,
    customerId: "prepaid",
    asset: w.asset.code,
    amount,
    idempotencyKey: `dep-${w.m}-${++deposits}`,
  });
  if (!r.ok) throw new Error(r.error.message);
}

const ingest = (w: UsageWorld, ids: string[], extra = {}) =>
  ingestUsage(
    db,
    ids.map((id) => ({ marketplaceId: w.m, input: w.record(id, extra) })),
  );

describe("event relay", () => {
  it("derives one usage event per batch, transfer and hold events, with strictly increasing positions", async () => {
    await relayAllEvents(db);
    const start = (await readAll()).at(-1)?.position ?? 0n;
    const w = await usageWorld(ctx);
    const results = await ingest(w, ["e1", "e2", "e3", "e4"]);
    expect(results.every((r) => r.status === "accepted")).toBe(true);
    const hold = await openHold(db, { marketplaceId: w.m, customerId: "prepaid", asset: w.asset.code, amount: 5_000_000n, idempotencyKey: `h-${w.m}` });
    await closeHold(db, { id: hold.id });
    await relayAllEvents(db);
    const got = await readAll(start, { marketplaceId: w.m });
    const positions = got.map((e) => e.position);
    expect(positions).toEqual([...positions].sort((a, b) => (a < b ? -1 : 1)));
    expect(new Set(positions).size).toBe(positions.length);
    const batches = got.filter((e) => e.type === "usage.batch.completed");
    expect(batches).toHaveLength(1);
    expect(batches[0]!.data).toMatchObject({
      marketplace_id: w.m,
      accepted: 4,
      totals: [{ asset_id: w.asset.id, records: 4, gross: String(4n * 2_498_400n) }],
    });
    expect(got.filter((e) => e.type === "transfer.posted").length).toBeGreaterThan(0);
    // Usage transfers are the batch's event, not one each.
    const usageTransfers = results.flatMap((r) => (r.status === "accepted" ? [r.record.transferId] : []));
    expect(usageTransfers).toHaveLength(4);
    expect(got.filter((e) => usageTransfers.includes(e.resource_id))).toEqual([]);
    expect(got.filter((e) => e.type.startsWith("hold.")).map((e) => e.type)).toEqual(["hold.opened", "hold.closed"]);
  });
});

describe("balance monitors", () => {
  it("fire once when the balance crosses the threshold and once when it comes back past the hysteresis", async () => {
    const w = await usageWorld(ctx, 100_000_000n); // 100 USDC; each record costs 2.4984 USDC
    await relayAllEvents(db);
    const m = await createBalanceMonitor(db, {
      principal: finance,
      accountId: w.accounts.prepaid,
      direction: "below",
      balance: "available",
      threshold: 95_000_000n,
      hysteresis: 3_000_000n,
      now: db.clock.now(),
    });
    const fired = async () => {
      await relayAllEvents(db);
      return (await readAll(0n, { resourceType: "balance_monitor", resourceId: m.id })).map((e) => `${e.type}@${String(e.data.value)}`);
    };
    expect(await fired()).toEqual([]);
    await ingest(w, ["b1", "b2"]); // 95.0032: above the line
    expect(await fired()).toEqual([]);
    await ingest(w, ["b3"]); // 92.5048: crossed
    expect(await fired()).toEqual(["balance.threshold.crossed@92504800"]);
    await ingest(w, ["b4"]); // still below: nothing new
    await deposit(w, 5_000_000n); // 95.0064: back over the line, but not by the hysteresis
    expect(await fired()).toEqual(["balance.threshold.crossed@92504800"]);
    await ingest(w, ["b5"]); // hovering: 92.508, no second crossing
    await deposit(w, 6_000_000n); // 98.508: recovered
    expect(await fired()).toEqual(["balance.threshold.crossed@92504800", "balance.threshold.recovered@98508000"]);
    await ingest(w, ["b6", "b7"]); // 93.5112: a new crossing
    const all = await fired();
    expect(all).toEqual(["balance.threshold.crossed@92504800", "balance.threshold.recovered@98508000", "balance.threshold.crossed@93511200"]);
    const [crossed] = await readAll(0n, { resourceType: "balance_monitor", resourceId: m.id, types: ["balance.threshold.crossed"] });
    expect(crossed).toMatchObject({
      marketplace_id: null,
      operator_id: null,
      data: { account_id: w.accounts.prepaid, direction: "below", threshold: "95000000", hysteresis: "3000000" },
    });
  });
});

describe.skipIf(!onRealPostgres)(`positions and transactions that commit late ${NEEDS_PG}`, () => {
  it("never appends an event behind one a reader may already have: a transaction still running holds the relay back", async () => {
    const [asset] = await db.query<{ id: string }>("select id from assets limit 1");
    const reconciliation = (q: { query: TestDatabase["query"] }, from: number) =>
      q.query(
        "insert into reconciliations (id, chain_id, asset_id, from_block, to_block, summary, requested_by) values (gen_random_uuid(), 1, $1, $2, $2, '{}', 'test') returning id",
        [asset!.id, from],
      );
    let release!: () => void;
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const gate = new Promise<void>((r) => (release = r));
    const early = db.transaction(async (tx) => {
      const [row] = await reconciliation(tx, 1);
      started();
      await gate;
      return (row as { id: string }).id;
    });
    await running;
    const [late] = (await reconciliation(db, 2)) as { id: string }[];
    const step = await relayEvents(db);
    const seen = await readAll(0n, { types: ["reconciliation.completed"] });
    expect(seen.map((e) => e.resource_id)).not.toContain(late!.id);
    expect(
      step === undefined || step.to <= BigInt((await db.query<{ x: string }>("select min(txid)::text as x from reconciliations where from_block = 2"))[0]!.x),
    ).toBe(true);
    release();
    const earlyId = await early;
    await relayAllEvents(db);
    const after = (await readAll(0n, { types: ["reconciliation.completed"] })).map((e) => e.resource_id);
    expect(after.indexOf(earlyId)).toBeGreaterThanOrEqual(0);
    expect(after.indexOf(earlyId)).toBeLessThan(after.indexOf(late!.id));
  });
});
