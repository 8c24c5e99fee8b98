import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { foldOperatorEarned, operatorBalances } from "../../src/db/queries/operator-views.js";
import { closeLedgerContext, createLedgerContext, type LedgerContext } from "../../src/services/context.js";
import { registerOperator } from "../../src/services/marketplaces.js";
import { reverseUsage } from "../../src/services/reverse-usage.js";
import type { UsageRecord } from "../../src/domain/usage.js";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { freshDatabase, withTriggersOff, type TestDatabase } from "../support/db.js";
import { usageWorld, type UsageWorld } from "../support/usage-world.js";

/**
 * operator_earned: what each operator's usage earned per marketplace and asset, as parts added by
 * triggers on usage_records and transfers and folded by the workers. An operator's balances read
 * `earned` from it instead of summing its whole history, so it must equal the records' net not
 * reversed after every kind of write and fold, and `verify` must name it when it does not.
 */
let db: TestDatabase;
let ctx: LedgerContext;
beforeAll(async () => {
  db = await freshDatabase();
  ctx = createLedgerContext(db);
});
afterAll(async () => {
  await closeLedgerContext(ctx);
  await db.destroy();
});

/** The net of the operator's usage records in the asset not reversed, summed from the records (what `earned` meant before). */
async function netNotReversed(operatorId: string, assetId: string, marketplaceId?: string): Promise<bigint> {
  const [row] = await db.query<{ n: string }>(
    `select coalesce(sum(u.net), 0)::text as n from usage_records u
      where u.operator_id = $1 and u.asset_id = $2 and ($3::text is null or u.marketplace_id = $3)
        and not exists (select 1 from transfers r where r.reverses_id = u.transfer_id)`,
    [operatorId, assetId, marketplaceId ?? null],
  );
  return BigInt(row!.n);
}

async function kept(operatorId: string, assetId: string, marketplaceId?: string): Promise<{ sum: bigint; parts: number }> {
  const [row] = await db.query<{ s: string; n: string }>(
    `select coalesce(sum(amount), 0)::text as s, count(*)::text as n from operator_earned
      where operator_id = $1 and asset_id = $2 and ($3::text is null or marketplace_id = $3)`,
    [operatorId, assetId, marketplaceId ?? null],
  );
  return { sum: BigInt(row!.s), parts: Number(row!.n) };
}

async function earnedShown(operatorId: string, assetId: string): Promise<bigint> {
  const row = (await operatorBalances(db, operatorId)).find((b) => b.asset_id === assetId);
  return BigInt(row?.earned ?? "0");
}

async function accepted(w: UsageWorld, externalId: string, extra: Parameters<UsageWorld["record"]>[1] = {}): Promise<UsageRecord> {
  const r = await ctx.usage.submit({ marketplaceId: w.m, input: w.record(externalId, extra) });
  if (r.status !== "accepted") throw new Error(`usage ${externalId}: ${JSON.stringify(r)}`);
  return r.record;
}

describe("operator earned", () => {
  it("follows single and grouped usage and reversals in two marketplaces; a fold keeps every sum and leaves one part per key", async () => {
    const w = await usageWorld(ctx, 500_000_000n);
    const other = await usageWorld(ctx, 500_000_000n);
    const [op, op2] = w.operators as [string, string];
    // The first operator also works in the other marketplace (its earnings there are kept apart, summed in its balances).
    await registerOperator(db, { id: op, name: op, marketplaceId: other.m });
    const exact = async () => {
      for (const [o, x] of [
        [op, w],
        [op2, w],
        [op, other],
      ] as const) {
        expect((await kept(o, x.asset.id, x.m)).sum).toBe(await netNotReversed(o, x.asset.id, x.m));
        expect(await earnedShown(o, x.asset.id)).toBe(await netNotReversed(o, x.asset.id));
      }
    };
    const first = await accepted(w, "e-1");
    expect(await kept(op, w.asset.id, w.m)).toEqual({ sum: first.net, parts: 1 });
    await exact();

    // Records of two operators, two customers and two marketplaces at once: grouped into shared
    // statements as they come, one part per marketplace, operator and asset of each statement.
    const many = await Promise.all([
      ...Array.from({ length: 12 }, (_, i) =>
        accepted(w, `e-g${i}`, { operatorId: w.operators[i % 2]!, customerId: i % 3 ? "prepaid" : "postpaid", quantity: String(600 * (i + 1)) }),
      ),
      ...Array.from({ length: 6 }, (_, i) => accepted(other, `o-g${i}`, { operatorId: op, customerId: "postpaid" })),
    ]);
    await exact();
    expect(await earnedShown(op2, w.asset.id)).toBe(many.filter((r) => r.operatorId === op2 && r.marketplaceId === w.m).reduce((s, r) => s + r.net, 0n));

    // A reversal takes the record's net back as a negative part; a second reversal is refused and adds nothing.
    const before = await kept(op, w.asset.id, w.m);
    await reverseUsage(db, { usage: first, reason: "test", idempotencyKey: `rev-${first.id}` });
    expect(await kept(op, w.asset.id, w.m)).toEqual({ sum: before.sum - first.net, parts: before.parts + 1 });
    await expect(reverseUsage(db, { usage: first, reason: "again", idempotencyKey: `rev2-${first.id}` })).rejects.toThrow(/already reversed/);
    expect((await kept(op, w.asset.id, w.m)).sum).toBe(before.sum - first.net);
    await exact();

    // The fold: one part per key, every sum as it was.
    expect(before.parts).toBeGreaterThan(1);
    const removed = await foldOperatorEarned(db);
    expect(removed).toBeGreaterThan(0);
    for (const [o, x] of [
      [op, w],
      [op2, w],
      [op, other],
    ] as const)
      expect((await kept(o, x.asset.id, x.m)).parts).toBe(1);
    await exact();
    expect(await foldOperatorEarned(db)).toBe(0);
    // A fold reads only the keys with new parts: the others' rows are not rewritten.
    const version = async (o: string, x: UsageWorld) =>
      (
        await db.query<{ v: string }>("select xmin::text as v from operator_earned where marketplace_id = $1 and operator_id = $2 and asset_id = $3", [
          x.m,
          o,
          x.asset.id,
        ])
      ).map((r) => r.v);
    const untouched = await version(op, w);
    await accepted(w, "e-later", { operatorId: op2 });
    expect((await kept(op2, w.asset.id, w.m)).parts).toBe(2);
    expect(await foldOperatorEarned(db)).toBe(1);
    expect(await version(op, w)).toEqual(untouched);
    expect((await kept(op2, w.asset.id, w.m)).parts).toBe(1);
    await exact();

    // Every record of a key reversed: the fold drops the key (nothing earned, no row kept).
    const mine = many.filter((r) => r.marketplaceId === other.m);
    for (const r of mine) await reverseUsage(db, { usage: r, reason: "test", idempotencyKey: `rev-${r.id}` });
    expect((await kept(op, other.asset.id, other.m)).sum).toBe(0n);
    await foldOperatorEarned(db);
    expect(await kept(op, other.asset.id, other.m)).toEqual({ sum: 0n, parts: 0 });
    await exact();
    expect((await verifyLedger(db)).violations).toEqual([]);
  });

  it("loses and doubles nothing when folds run while usage and reversals are written", async () => {
    const w = await usageWorld(ctx, 500_000_000n);
    const written: UsageRecord[] = [];
    let folds = 0;
    let writing = true;
    const folder = (async () => {
      // Bounded: stops when the writers are done (or after 500 folds).
      while (writing && folds < 500) {
        await foldOperatorEarned(db);
        folds++;
      }
    })();
    for (let round = 0; round < 6; round++) {
      const batch = await Promise.all(
        Array.from({ length: 8 }, (_, i) => accepted(w, `f-${round}-${i}`, { operatorId: w.operators[i % 3]!, quantity: String(60 * (i + 1)) })),
      );
      written.push(...batch);
      await reverseUsage(db, { usage: batch[round % 8]!, reason: "test", idempotencyKey: `frev-${round}` });
    }
    writing = false;
    await folder;
    expect(folds).toBeGreaterThan(0);
    for (const o of w.operators) expect((await kept(o, w.asset.id, w.m)).sum).toBe(await netNotReversed(o, w.asset.id, w.m));
    await foldOperatorEarned(db);
    for (const o of w.operators) {
      expect((await kept(o, w.asset.id, w.m)).parts).toBe(1);
      expect(await earnedShown(o, w.asset.id)).toBe(await netNotReversed(o, w.asset.id));
    }
    expect((await verifyLedger(db)).violations).toEqual([]);
  });

  it("is written only by its triggers and the fold; a part changed behind its back is named by verify", async () => {
    const w = await usageWorld(ctx, 50_000_000n);
    const r = await accepted(w, "v-1");
    const op = w.operators[0]!;
    const key = [w.m, op, w.asset.id];
    for (const attempt of [
      "update operator_earned set amount = 0 where marketplace_id = $1 and operator_id = $2 and asset_id = $3",
      "delete from operator_earned where marketplace_id = $1 and operator_id = $2 and asset_id = $3",
      "insert into operator_earned (marketplace_id, operator_id, asset_id, amount) values ($1, $2, $3, 5)",
    ])
      await expect(db.query(attempt, key)).rejects.toThrow(/operator_earned is kept by the triggers on usage_records and transfers/);
    await expect(db.query("truncate operator_earned")).rejects.toThrow(/TRUNCATE is not allowed/);
    expect((await kept(op, w.asset.id, w.m)).sum).toBe(r.net);

    // Triggers turned off for one transaction (a superuser): a part inflated, then one missing.
    const tamper = (sql: string) => withTriggersOff(db, [sql], key);
    await tamper("insert into operator_earned (marketplace_id, operator_id, asset_id, amount) values ($1, $2, $3, 1000)");
    let report = await verifyLedger(db);
    expect(report.ok).toBe(false);
    expect(report.violations.find((v) => v.check === "operator_earned")?.detail).toBe(
      `marketplace ${w.m}, operator ${op}, asset ${w.asset.id}: earnings ${r.net + 1000n} kept in operator_earned, ${r.net} in its usage records not reversed`,
    );
    await tamper("delete from operator_earned where marketplace_id = $1 and operator_id = $2 and asset_id = $3");
    report = await verifyLedger(db);
    expect(report.violations.find((v) => v.check === "operator_earned")?.detail).toBe(
      `marketplace ${w.m}, operator ${op}, asset ${w.asset.id}: earnings 0 kept in operator_earned, ${r.net} in its usage records not reversed`,
    );
    // Put back as it was: nothing to name.
    await tamper(`insert into operator_earned (marketplace_id, operator_id, asset_id, amount) values ($1, $2, $3, ${r.net})`);
    expect((await verifyLedger(db)).violations).toEqual([]);
    // A session posing as the fold passes the guard (it stops mistakes, not a role that can write
    // any table); what it writes is named the same way.
    await db.transaction(async (tx) => {
      await tx.query("select set_config('ledger.folding_operator_earned', 'on', true)");
      await tx.query("insert into operator_earned (marketplace_id, operator_id, asset_id, amount) values ($1, $2, $3, 7)", key);
    });
    expect((await verifyLedger(db)).violations.map((v) => v.check)).toEqual(["operator_earned"]);
    await tamper("delete from operator_earned where marketplace_id = $1 and operator_id = $2 and asset_id = $3 and amount = 7");
    expect((await verifyLedger(db)).violations).toEqual([]);
  });

  it("is rebuilt from the records by the migration's backfill: records written before it count, reversed ones do not", async () => {
    const w = await usageWorld(ctx, 50_000_000n);
    const records = await Promise.all(Array.from({ length: 5 }, (_, i) => accepted(w, `b-${i}`, { operatorId: w.operators[i % 2]! })));
    await reverseUsage(db, { usage: records[0]!, reason: "test", idempotencyKey: `brev-${records[0]!.id}` });
    // The statement of migrations/0038_operator_earned.sql that fills the table from what the records
    // hold, run as the migration runs it: on a table with no parts (triggers off to empty it).
    const migration = readFileSync(join(import.meta.dirname, "../../migrations/0038_operator_earned.sql"), "utf8");
    const backfill = migration.split("--> statement-breakpoint").find((st) => st.includes("-- What the records hold now."));
    expect(backfill).toBeDefined();
    await withTriggersOff(db, ["delete from operator_earned", backfill!]);
    for (const o of w.operators) expect((await kept(o, w.asset.id, w.m)).sum).toBe(await netNotReversed(o, w.asset.id, w.m));
    expect((await kept(w.operators[0]!, w.asset.id, w.m)).sum).toBe(records[2]!.net + records[4]!.net);
    expect((await verifyLedger(db)).violations).toEqual([]);
  });
});
