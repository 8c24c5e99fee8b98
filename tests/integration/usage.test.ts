import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ahead, usageMonth } from "../support/clock.js";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { closeLedgerContext, createLedgerContext, type LedgerContext } from "../../src/services/context.js";
import { publishFeeSchedule } from "../../src/services/fee-schedules.js";
import { ingestUsage, type UsageResult } from "../../src/services/ingest-usage.js";
import { getTransfer } from "../../src/db/queries/transfers.js";
import { expireUsageHolds, getHold, openHold } from "../../src/services/holds.js";
import { freshDatabase, NEEDS_PG, onRealPostgres, type TestDatabase } from "../support/db.js";
import { sumOf, usageWorld } from "../support/usage-world.js";

let db: TestDatabase;
let ctx: LedgerContext;
beforeAll(async () => {
  db = await freshDatabase({ maxConnections: 30 });
  ctx = createLedgerContext(db, { maxConcurrent: 4 });
});
afterAll(async () => {
  await closeLedgerContext(ctx);
  expect((await verifyLedger(db)).violations).toEqual([]);
  await db.destroy();
});

const statuses = (rs: UsageResult[]) => rs.map((r) => (r.status === "rejected" ? `rejected:${r.error.code}` : r.status));

describe("usage ingestion", () => {
  it("rates a record and posts one transfer: customer → operator (net) and → each fee account", async () => {
    const w = await usageWorld(ctx);
    // 3,600 GPU-seconds at 0.000694 USDC/s = 2.4984 USDC; 10% marketplace, 1% protocol
    const r = await ctx.usage.submit({ marketplaceId: w.m, input: w.record("job-1", { metadata: { job: "j1" } }) });
    expect(r.status).toBe("accepted");
    if (r.status !== "accepted") return;
    expect(r.record).toMatchObject({ gross: 2_498_400n, net: 2_223_576n, feeScheduleVersion: 1, metadata: { job: "j1" } });
    expect(r.record.fees.map((f) => [f.party, f.amount])).toEqual([
      ["marketplace", 249_840n],
      ["protocol", 24_984n],
    ]);
    const t = (await getTransfer(db, r.record.transferId))!;
    expect(t.effectiveAt).toEqual(usageMonth.day(11));
    expect(t.legs.map((l) => [l.creditAccountId, l.postedAmount])).toEqual([
      [w.accounts.operator(0), 2_223_576n],
      [w.accounts.marketplaceFees, 249_840n],
      [w.accounts.protocolFees, 24_984n],
    ]);
    expect(await w.posted(w.accounts.prepaid)).toBe(1_000_000_000n - 2_498_400n);
    expect(await w.posted(w.accounts.operator(0))).toBe(2_223_576n);
  });

  it("answers a repeat with the original, and the same id with other content with a conflict", async () => {
    const w = await usageWorld(ctx);
    const first = await ctx.usage.submit({ marketplaceId: w.m, input: w.record("job-1") });
    const again = await ctx.usage.submit({ marketplaceId: w.m, input: w.record("job-1") });
    expect(again.status).toBe("duplicate");
    expect(again.status === "duplicate" && first.status === "accepted" && again.record).toEqual(first.status === "accepted" && first.record);
    const other = await ctx.usage.submit({ marketplaceId: w.m, input: w.record("job-1", { quantity: "3601" }) });
    expect(other.status === "rejected" && other.error.code).toBe("usage_conflict");
    expect(await w.posted(w.accounts.operator(0))).toBe(2_223_576n);
  });

  it("rejects what cannot be rated, each with its reason", async () => {
    const w = await usageWorld(ctx, 1_000n);
    const results = await ingestUsage(db, [
      { marketplaceId: w.m, input: w.record("a", { customerId: "nobody" }) },
      { marketplaceId: w.m, input: w.record("b", { operatorId: "stranger" }) },
      { marketplaceId: w.m, input: w.record("c", { asset: "NOPE" }) },
      { marketplaceId: w.m, input: w.record("d", { periodEnd: ahead(3_600_000) }) },
      { marketplaceId: w.m, input: w.record("e", { quantity: "1", unitPrice: "0.0000001" }) },
      { marketplaceId: w.m, input: w.record("f") }, // 2.4984 USDC from a prepaid balance of 0.001
      { marketplaceId: w.m, input: w.record("g", { unitPrice: undefined }) },
      { marketplaceId: w.m, input: w.record("h", { periodEnd: new Date("2019-01-01T00:00:00Z"), periodStart: new Date("2018-12-31T23:00:00Z") }) },
      { marketplaceId: w.m, input: w.record("i", { customerId: "postpaid" }) }, // a receivable may go negative
    ]);
    expect(statuses(results)).toEqual([
      "rejected:customer_not_found",
      "rejected:operator_not_found",
      "rejected:asset_not_found",
      "rejected:usage_in_future",
      "rejected:rates_to_zero",
      "rejected:exceeds_credits",
      "rejected:invalid_request",
      "rejected:no_fee_schedule",
      "accepted",
    ]);
    expect(await w.posted(w.accounts.postpaid)).toBe(-2_498_400n);
  });

  it("rates with the schedule version in force at the end of the usage period", async () => {
    const w = await usageWorld(ctx);
    await publishFeeSchedule(db, { marketplaceId: w.m, effectiveFrom: new Date("2026-06-01T00:00:00Z"), rules: [{ party: "marketplace", bps: 500 }] });
    const [before, after] = await ingestUsage(db, [
      {
        marketplaceId: w.m,
        input: w.record("old", {
          amount: "1000000",
          unitPrice: undefined,
          periodStart: new Date("2026-05-31T00:00:00Z"),
          periodEnd: new Date("2026-05-31T23:59:59Z"),
        }),
      },
      {
        marketplaceId: w.m,
        input: w.record("new", {
          amount: "1000000",
          unitPrice: undefined,
          periodStart: new Date("2026-05-31T23:00:00Z"),
          periodEnd: new Date("2026-06-01T00:00:00Z"),
        }),
      },
    ]);
    expect(before!.status === "accepted" && [before!.record.feeScheduleVersion, before!.record.net]).toEqual([1, 890_000n]);
    expect(after!.status === "accepted" && [after!.record.feeScheduleVersion, after!.record.net]).toEqual([2, 950_000n]);
  });

  it("writes nothing of an atomic batch with a rejected record", async () => {
    const w = await usageWorld(ctx, 3_000_000n);
    const before = await w.posted(w.accounts.prepaid);
    const invalid = await ingestUsage(
      db,
      [
        { marketplaceId: w.m, input: w.record("x1") },
        { marketplaceId: w.m, input: w.record("x2", { customerId: "nobody" }) },
      ],
      { atomic: true },
    );
    expect(statuses(invalid)).toEqual(["rejected:atomic_batch_aborted", "rejected:customer_not_found"]);
    const broke = await ingestUsage(
      db,
      [
        { marketplaceId: w.m, input: w.record("y1") },
        { marketplaceId: w.m, input: w.record("y2") },
      ],
      { atomic: true },
    );
    expect(statuses(broke)).toEqual(["rejected:atomic_batch_aborted", "rejected:exceeds_credits"]);
    expect(await w.posted(w.accounts.prepaid)).toBe(before);
    const [count] = await db.query<{ n: string }>("select count(*)::text as n from usage_records where marketplace_id = $1", [w.m]);
    expect(count!.n).toBe("0");
  });

  it("takes a batch of 10,000 with duplicates and invalid records mixed in, each with the right result", async () => {
    const w = await usageWorld(ctx, 10n ** 15n);
    await ingestUsage(db, [{ marketplaceId: w.m, input: w.record("r-5") }]); // stored before: a duplicate below
    const base = (i: number) => w.record(`r-${i}`, { operatorId: w.operators[i % 3]!, amount: String(1_000 + i), unitPrice: undefined });
    const items = Array.from({ length: 10_000 }, (_, i) => {
      if (i === 5) return { marketplaceId: w.m, input: w.record("r-5") };
      if (i % 1000 === 7) return { marketplaceId: w.m, input: { ...base(i), customerId: "nobody" } };
      if (i % 1000 === 8) return { marketplaceId: w.m, input: base(i - 2) }; // a repeat within the batch
      return { marketplaceId: w.m, input: base(i) };
    });
    const started = Date.now();
    const results = await ingestUsage(db, items);
    const ms = Date.now() - started;
    const counts = statuses(results).reduce<Record<string, number>>((acc, s) => ({ ...acc, [s]: (acc[s] ?? 0) + 1 }), {});
    expect(counts).toEqual({ accepted: 9_979, duplicate: 11, "rejected:customer_not_found": 10 });
    const accepted = results.filter((r) => r.status === "accepted") as Extract<UsageResult, { status: "accepted" }>[];
    const gross = sumOf(accepted.map((r) => r.record.gross));
    const net = (i: number) => sumOf(accepted.filter((r) => r.record.operatorId === w.operators[i]).map((r) => r.record.net));
    expect((await w.posted(w.accounts.operator(0))) + (await w.posted(w.accounts.operator(1))) + (await w.posted(w.accounts.operator(2)))).toBe(
      net(0) + net(1) + net(2) + 2_223_576n,
    );
    expect(await w.posted(w.accounts.prepaid)).toBe(10n ** 15n - gross - 2_498_400n);
    console.log(`10,000-record batch ingested in ${ms} ms on ${db.kind}`);
  });
});

describe.skipIf(!onRealPostgres)(`usage under concurrency ${NEEDS_PG}`, () => {
  it("20 concurrent submissions of the same batch post each record once", async () => {
    const w = await usageWorld(ctx, 10n ** 15n);
    const items = Array.from({ length: 200 }, (_, i) => ({
      marketplaceId: w.m,
      input: w.record(`same-${i}`, { operatorId: w.operators[i % 3]!, amount: "1000", unitPrice: undefined }),
    }));
    const all = await Promise.all(Array.from({ length: 20 }, () => ingestUsage(db, items)));
    for (let i = 0; i < items.length; i++) {
      const ids = new Set(
        all.map((rs) => {
          const r = rs[i]!;
          return r.status === "rejected" ? r.error.code : r.record.id;
        }),
      );
      expect([...ids], `record ${i}`).toHaveLength(1);
      expect(all.filter((rs) => rs[i]!.status === "accepted").length).toBe(1);
    }
    const [count] = await db.query<{ n: string }>("select count(*)::text as n from usage_records where marketplace_id = $1", [w.m]);
    expect(count!.n).toBe("200");
    expect(await w.posted(w.accounts.prepaid)).toBe(10n ** 15n - 200_000n);
  });

  it("two different records racing under one external_id: one is accepted, the other is a conflict", async () => {
    const w = await usageWorld(ctx, 10n ** 15n);
    for (let round = 0; round < 5; round++) {
      const [x, y] = await Promise.all([
        ingestUsage(db, [{ marketplaceId: w.m, input: w.record(`race-${round}`, { resource: "gpu:a100" }) }]),
        ingestUsage(db, [{ marketplaceId: w.m, input: w.record(`race-${round}`, { resource: "gpu:h100" }) }]),
      ]);
      expect([x![0]!.status, y![0]!.status].sort()).toEqual(["accepted", "rejected"]);
      const rejected = [x![0]!, y![0]!].find((r) => r.status === "rejected");
      expect(rejected?.status === "rejected" && rejected.error.code).toBe("usage_conflict");
    }
  });

  it("a prepaid customer never goes below zero under concurrent usage", async () => {
    const w = await usageWorld(ctx, 1_000_000n);
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        ctx.usage.submit({ marketplaceId: w.m, input: w.record(`spend-${i}`, { amount: "30000", unitPrice: undefined, operatorId: w.operators[i % 3]! }) }),
      ),
    );
    const accepted = results.filter((r) => r.status === "accepted").length;
    expect(accepted).toBe(33); // floor(1,000,000 / 30,000)
    expect(results.filter((r) => r.status === "rejected").every((r) => r.status === "rejected" && r.error.code === "exceeds_credits")).toBe(true);
    expect(await w.posted(w.accounts.prepaid)).toBe(1_000_000n - 33n * 30_000n);
  });
});

/** Counts the statements sent to the database, by their first words. */
function countStatements(target: LedgerContext["db"]) {
  const counts = new Map<string, number>();
  const note = (text: string) => {
    const key = text.trim().replace(/\s+/g, " ").split(" ").slice(0, 3).join(" ").toLowerCase();
    counts.set(key, (counts.get(key) ?? 0) + 1);
  };
  const query = target.query.bind(target);
  const transaction = target.transaction.bind(target);
  const spy = Object.assign(Object.create(target), {
    query: (text: string, params?: unknown[]) => (note(text), query(text, params)),
    transaction: <T>(fn: (tx: { query: typeof query }) => Promise<T>) =>
      transaction((tx) => fn({ query: (text: string, params?: unknown[]) => (note(text), tx.query(text, params)) })),
  });
  return { spy, counts };
}

describe("how usage is written", () => {
  it("a batch writes set-based: the same statements for 10 records as for 500", async () => {
    const w = await usageWorld(ctx, 10n ** 15n);
    const run = async (n: number, tag: string) => {
      const { spy, counts } = countStatements(db);
      const items = Array.from({ length: n }, (_, i) => ({
        marketplaceId: w.m,
        input: w.record(`${tag}-${i}`, { operatorId: w.operators[i % 3]!, amount: "1000", unitPrice: undefined }),
      }));
      const results = await ingestUsage(spy, items);
      expect(results.every((r) => r.status === "accepted")).toBe(true);
      return counts;
    };
    await run(3, "warm"); // first use opens the accounts
    const small = await run(10, "small");
    const large = await run(500, "large");
    expect([...large.entries()].sort()).toEqual([...small.entries()].sort());
    // Entries go in two statements, one per lock round: accounts with a balance limit (customers,
    // operators), then accounts without one (fee accounts), whose locks are taken last.
    expect(large.get("insert into entries")).toBe(2);
    expect(large.get("insert into transfers")).toBe(1);
    // The usage rows are inserted by one statement, which also queues the records of marketplaces that lock the rate at earning.
    expect(large.get("with usage_rows as")).toBe(1);
  });

  it("single records go through the group committer: concurrent records share transactions", async () => {
    const w = await usageWorld(ctx, 10n ** 15n);
    const { spy, counts } = countStatements(db);
    const committed = createLedgerContext(spy, { maxConcurrent: 1 });
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        committed.usage.submit({ marketplaceId: w.m, input: w.record(`gc-${i}`, { amount: "1000", unitPrice: undefined }) }),
      ),
    );
    await closeLedgerContext(committed);
    expect(results.every((r) => r.status === "accepted")).toBe(true);
    expect(counts.get("insert into transfers")!).toBeLessThan(10);
  });

  it("a hold that times out is closed by the expirer and its remainder returned", async () => {
    const w = await usageWorld(ctx, 10_000_000n);
    const hold = await openHold(db, {
      marketplaceId: w.m,
      customerId: "prepaid",
      asset: w.asset.code,
      amount: 4_000_000n,
      timeoutSeconds: 1,
      idempotencyKey: `hold-${w.m}`,
    });
    expect(await w.posted(w.accounts.prepaid)).toBe(6_000_000n);
    const used = await ctx.usage.submit({ marketplaceId: w.m, input: w.record("on-hold", { holdId: hold.id, amount: "1000000", unitPrice: undefined }) });
    expect(used.status).toBe("accepted");
    await new Promise((r) => setTimeout(r, 1100));
    expect(await expireUsageHolds(db)).toBeGreaterThanOrEqual(1);
    expect(await getHold(db, hold.id)).toMatchObject({ status: "expired", remaining: 0n });
    expect(await w.posted(w.accounts.prepaid)).toBe(9_000_000n);
  });

  it("a retried hold request is the same hold", async () => {
    const w = await usageWorld(ctx, 10_000_000n);
    const req = { marketplaceId: w.m, customerId: "prepaid", asset: w.asset.code, amount: 1_000_000n, idempotencyKey: `retry-hold-${w.m}` };
    const first = await openHold(db, req);
    const again = await openHold(db, req);
    expect(again.id).toBe(first.id);
    expect(await w.posted(w.accounts.prepaid)).toBe(9_000_000n);
  });

  it("a close interrupted by a crash (hold marked closed, funds still in escrow) is finished by the expirer", async () => {
    const w = await usageWorld(ctx, 10_000_000n);
    const hold = await openHold(db, { marketplaceId: w.m, customerId: "prepaid", asset: w.asset.code, amount: 4_000_000n, idempotencyKey: `crash-${w.m}` });
    await db.query("update holds set status = 'closed', closed_at = now() where id = $1", [hold.id]); // the crash: marked, not moved
    expect(await getHold(db, hold.id)).toMatchObject({ status: "closed", remaining: 4_000_000n });
    expect(await expireUsageHolds(db)).toBeGreaterThanOrEqual(1);
    expect(await getHold(db, hold.id)).toMatchObject({ status: "closed", remaining: 0n });
    expect(await w.posted(w.accounts.prepaid)).toBe(10_000_000n);
  });
});
