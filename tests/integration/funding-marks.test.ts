import { afterEach, describe, expect, it } from "vitest";
import type { Queryable } from "../../src/db/client.js";
import { fundingMarkOf, lockFundingMark, moveFundingMark } from "../../src/db/queries/funding-marks.js";
import { firstUnfundedRecord } from "../../src/db/queries/funding.js";
import { moveFundingMarks, type WritingTops } from "../../src/services/funding-marks.js";
import { marketplacePool, unfundedUsage, type Without } from "../../src/services/funding.js";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { fundingWorld, USD, type FundingWorld } from "../support/funding-world.js";
import { expectStatus } from "../support/http.js";
import { TOKEN } from "../support/payout-world.js";

let world: FundingWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

class Rollback extends Error {}

type World = FundingWorld["w"];

/** The test token's asset id. */
async function tokenId(db: World["db"]): Promise<string> {
  return (await db.query<{ id: string }>("select id from assets where code = $1", [TOKEN]))[0]!.id;
}

/** Writes to the mark tables as the mark step does (its flag set), in a transaction of their own. */
async function asMarkStep(db: World["db"], ...statements: string[]): Promise<void> {
  await db.transaction(async (tx: Queryable) => {
    await tx.query("select set_config('ledger.marking_usage_funding', 'on', true)");
    for (const sql of statements) await tx.query(sql);
  });
}

/**
 * The shown judgment of marketplace m as the service makes it (from the mark when it holds), and
 * the walk over every record (the mark removed in a transaction rolled back).
 */
async function markedAndFull(db: World["db"], asset: string, options: Without = {}) {
  const marked = await unfundedUsage(db, "m", asset, null, { ...options, shown: true });
  let full: Awaited<ReturnType<typeof unfundedUsage>> = [];
  await db
    .transaction(async (tx: Queryable) => {
      await tx.query("select set_config('ledger.marking_usage_funding', 'on', true)");
      await tx.query("delete from usage_funding_marks where marketplace_id = 'm'");
      full = await unfundedUsage(tx, "m", asset, null, { ...options, shown: true });
      throw new Rollback();
    })
    .catch((e: unknown) => {
      if (!(e instanceof Rollback)) throw e;
    });
  return { marked, full };
}

/**
 * Funding marks (docs/ledger.md, "The funding mark"): a judgment that starts after the mark must
 * give what the walk over every record gives, whatever happened since the mark was made.
 */
describe("funding marks", () => {
  it("a judgment from the mark equals the walk over every record: records added, money up and down, reversals, records left out", async () => {
    const s = (world = await fundingWorld());
    const db = s.w.db;
    const asset = await tokenId(db);
    const seqOf = async (usageId: string) =>
      BigInt((await db.query<{ s: string }>("select funding_seq::text as s from usage_records where id = $1", [usageId]))[0]!.s);
    const grant = s.grant;
    const available = async () => {
      const p = await marketplacePool(db, "m", asset);
      return p.settled + p.creditLimit;
    };
    const expectSame = async (options: Without = {}) => {
      const { marked, full } = await markedAndFull(db, asset, options);
      expect(marked).toEqual(full);
      return marked;
    };
    const move = () => moveFundingMarks(db, db.clock.now());
    const walkedAfter = async () => (await firstUnfundedRecord(db, "m", asset, await available())).walkedAfter;

    await s.deposit("c", 10_000n * USD); // claimed, not received: a balance to spend, not money that funds
    await s.settle(50n * USD, "c wire 1", "c"); // c's own money
    await grant(300n * USD); // the pool
    const r1 = await s.usage("o", "c", 40n * USD); // c's money
    const r2 = await s.usage("o", "p", 200n * USD); // pool 200
    const r3 = await s.usage("honest", "p", 80n * USD); // pool 280
    const r4 = await s.usage("o2", "c", 30n * USD); // c's last 10, pool 300
    const r5 = await s.usage("honest", "p", 100n * USD); // unfunded: the first one
    await s.usage("o", "c", 20n * USD); // unfunded
    expect(await fundingMarkOf(db, "m", asset)).toBe(0n);
    expect(await walkedAfter()).toBe(0n);
    const before = await expectSame();
    expect(before.map((u) => [u.operatorId, u.gross])).toEqual([
      ["honest", 100n * USD],
      ["o", 20n * USD],
    ]);

    // The mark goes to the record before the first one the money leaves unfunded.
    expect(await move()).toBe(1);
    expect(await fundingMarkOf(db, "m", asset)).toBe((await seqOf(r5.id)) - 1n);
    expect(await fundingMarkOf(db, "m", asset)).toBeGreaterThanOrEqual(await seqOf(r4.id));
    expect(await walkedAfter()).toBe(await fundingMarkOf(db, "m", asset));
    expect(await expectSame()).toEqual(before);
    expect(await move()).toBe(0); // nothing new: it stays

    // More usage, then money: the mark follows the first record still unfunded.
    await s.usage("o", "p", 10n * USD);
    await expectSame();
    await s.settle(150n * USD, "m settles 1");
    expect(await expectSame()).toEqual([]);
    expect(await move()).toBe(1);
    // Every record funded: the mark goes to the last funding_seq drawn (at or past the marketplace's last record).
    const top = await fundingMarkOf(db, "m", asset);
    expect(top).toBeGreaterThanOrEqual(
      BigInt((await db.query<{ s: string }>("select max(funding_seq)::text as s from usage_records where marketplace_id = 'm'"))[0]!.s),
    );
    const r8 = await s.usage("honest", "p", 100n * USD); // 20 of it funded
    expect((await expectSame()).map((u) => [u.operatorId, u.gross])).toEqual([["honest", 80n * USD]]);
    expect(await walkedAfter()).toBe(top);

    // A record before the mark reversed: its money funds later records; the mark still holds.
    expectStatus(await s.api.call("POST", `/v1/usage/${r1.id}/reverse`, { key: s.keys.market, body: { reason: "meter fault" } }), 201);
    expect(await walkedAfter()).toBe(top);
    expect((await expectSame()).map((u) => [u.operatorId, u.gross])).toEqual([["honest", 40n * USD]]);
    // A record after the mark reversed: it is not taken off the customer's gross before the mark.
    const r9 = await s.usage("o2", "p", 5n * USD);
    await expectSame();
    expectStatus(await s.api.call("POST", `/v1/usage/${r9.id}/reverse`, { key: s.keys.market, body: { reason: "meter fault" } }), 201);
    expect(await walkedAfter()).toBe(top);
    expect((await expectSame()).map((u) => [u.operatorId, u.gross])).toEqual([["honest", 40n * USD]]);
    // Records left out, before and after the mark (a reversal being judged).
    await expectSame({ withoutUsageIds: [r2.id] });
    await expectSame({ withoutUsageIds: [r3.id, r8.id] });
    await expectSame({ withoutUsageId: r4.id });

    // Money goes down (the credit limit lowered): the mark no longer holds and is not used.
    await grant(100n * USD);
    expect(await walkedAfter()).toBe(0n);
    const lowered = await expectSame();
    expect(lowered.length).toBeGreaterThan(0);
    // The workers move it back to where the money now reaches.
    expect(await move()).toBe(1);
    const back = await fundingMarkOf(db, "m", asset);
    expect(back).toBe((await seqOf(r3.id)) - 1n);
    expect(await walkedAfter()).toBe(back);
    expect(await expectSame()).toEqual(lowered);
    await expectSame({ withoutUsageIds: [r2.id, r8.id] });
    // Money back up: the same mark holds again, and moves on.
    await grant(300n * USD);
    expect(await walkedAfter()).toBe(back);
    await expectSame();
    expect(await move()).toBe(1);
    expect(await fundingMarkOf(db, "m", asset)).toBeGreaterThan(back);
    await expectSame();
    expect((await verifyLedger(db)).violations).toEqual([]);
  });

  it("a mark is written only by the mark step, and npm run verify names one that does not match the records", async () => {
    const s = (world = await fundingWorld());
    const db = s.w.db;
    await s.usage("o", "p", 100n * USD);
    await s.usage("honest", "p", 100n * USD);
    await s.settle(150n * USD, "m settles 1");
    expect(await moveFundingMarks(db, db.clock.now())).toBe(1);
    expect((await verifyLedger(db)).violations).toEqual([]);

    for (const sql of [
      "update usage_funding_mark_customers set gross = gross - 1",
      "delete from usage_funding_mark_customers",
      "insert into usage_funding_mark_customers (marketplace_id, asset_id, customer_id, gross) select marketplace_id, asset_id, 'd', 1 from usage_funding_marks",
      "update usage_funding_marks set funding_seq = funding_seq + 1000",
      "truncate usage_funding_marks",
    ])
      await expect(db.query(sql), sql).rejects.toMatchObject({ code: "42501" });

    // Past the guard (a session that sets the step's flag), verify names the customer's wrong part.
    await asMarkStep(db, "update usage_funding_mark_customers set gross = gross - 1");
    const report = await verifyLedger(db);
    expect(report.ok).toBe(false);
    expect(report.violations).toEqual([
      expect.objectContaining({
        check: "funding_marks",
        detail: expect.stringMatching(/marketplace m, asset .*, customer p: gross 99999999 kept at the funding mark, 100000000 in its usage records/),
      }),
    ]);
    await asMarkStep(db, "update usage_funding_mark_customers set gross = gross + 1", "update usage_funding_marks set funding_seq = funding_seq + 1000000000");
    // A mark moved past every funding_seq drawn: its parts no longer match what is up to it either.
    expect((await verifyLedger(db)).violations).toEqual([
      expect.objectContaining({ check: "funding_marks", detail: expect.stringContaining("customer p: gross 100000000 kept at the funding mark, 200000000") }),
      expect.objectContaining({ check: "funding_marks", detail: expect.stringContaining("beyond the last funding_seq drawn") }),
    ]);
  });

  it("marks moved while usage is written never count a record twice or leave one out", async () => {
    const s = (world = await fundingWorld());
    const db = s.w.db;
    const asset = await tokenId(db);
    await s.settle(1_000n * USD, "m settles 1");
    let writing = true;
    const writers = Promise.all(
      [0, 1, 2, 3].map(async (k) => {
        for (let i = 0; i < 15; i++) await s.usage(k % 2 ? "o" : "honest", "p", BigInt(20 + k + i) * USD);
      }),
    ).finally(() => (writing = false));
    let moves = 0;
    while (writing) {
      moves += await moveFundingMarks(db, db.clock.now());
      await new Promise((r) => setTimeout(r, 5));
    }
    await writers;
    moves += await moveFundingMarks(db, db.clock.now());
    expect(moves).toBeGreaterThan(0);
    // Every part matches the records up to the mark, and the judgment from it equals the walk over every record.
    expect((await verifyLedger(db)).violations).toEqual([]);
    const mark = await fundingMarkOf(db, "m", asset);
    expect(mark).toBeGreaterThan(0n);
    const { marked, full } = await markedAndFull(db, asset);
    expect(marked).toEqual(full);
    expect(full.length).toBeGreaterThan(0);
  });

  it("a payout is judged on the records, not on the mark: a mark made to say the usage is funded shows a balance, pays nothing", async () => {
    const s = (world = await fundingWorld());
    const db = s.w.db;
    await s.settle(100n * USD, "m settles 1");
    await s.usage("o", "p", 100n * USD); // funded by the settlement
    await s.usage("o", "p", 100n * USD); // awaits money
    expect(await moveFundingMarks(db, db.clock.now())).toBe(1);
    const net = 89n * USD;
    expect(await s.balance("o")).toMatchObject({ payable_now: net.toString(), awaiting_funds: net.toString() });
    // Past the guard: the mark's part of customer p lowered to 0, as if its first record took nothing from the pool.
    await asMarkStep(db, "update usage_funding_mark_customers set gross = 0");
    // The balance shown trusts the mark (verify names it) ...
    expect((await s.balance("o")).awaiting_funds).toBe("0");
    expect((await verifyLedger(db)).violations).toEqual([expect.objectContaining({ check: "funding_marks" })]);
    // ... a payout does not: only the funded earnings go out.
    const refused = await s.payout("o", 2n * net);
    expectStatus(refused, 422);
    expect(refused.body.code).toBe("payout_unfunded");
    expect(await s.payoutRows()).toBe("0");
    expectStatus(await s.payout("o", net), 201);
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    "two mark steps at once (two worker processes): the second waits for the first and starts where it ended",
    async () => {
      const s = (world = await fundingWorld());
      const db = s.w.db;
      const asset = await tokenId(db);
      await s.settle(100n * USD, "c wire", "c");
      await s.settle(150n * USD, "m settles");
      await s.usage("o", "c", 40n * USD);
      await s.usage("o", "c", 30n * USD);
      await s.usage("honest", "p", 200n * USD); // the first record the money leaves unfunded
      await s.usage("o2", "c", 20n * USD);
      const { first } = await firstUnfundedRecord(db, "m", asset, 150n * USD);
      const to = first! - 1n;
      let aLocked!: () => void;
      const aIn = new Promise<void>((r) => (aLocked = r));
      let bFrom: bigint | undefined;
      const a = db.transaction(async (tx: Queryable) => {
        expect(await lockFundingMark(tx, "m", asset)).toBe(0n); // no mark yet
        aLocked();
        await new Promise((r) => setTimeout(r, 300));
        expect(bFrom).toBeUndefined(); // the other step is still waiting
        await moveFundingMark(tx, { marketplaceId: "m", assetId: asset, from: 0n, to, at: db.clock.now() });
      });
      await aIn;
      const b = db.transaction(async (tx: Queryable) => {
        bFrom = await lockFundingMark(tx, "m", asset);
        if (bFrom !== to) await moveFundingMark(tx, { marketplaceId: "m", assetId: asset, from: bFrom, to, at: db.clock.now() });
      });
      await Promise.all([a, b]);
      expect(bFrom).toBe(to);
      expect((await verifyLedger(db)).violations).toEqual([]);
    },
  );

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    "a marketplace that never stops writing usage: the step never waits, and moves the mark one step behind, below what was being written",
    async () => {
      const s = (world = await fundingWorld());
      const db = s.w.db;
      const asset = await tokenId(db);
      await s.settle(100n * USD, "m settles");
      await s.usage("o", "p", 100n * USD);
      await s.usage("honest", "p", 100n * USD); // awaits money
      /**
       * Usage being written: the marketplace's funding lock held shared by another connection, a
       * funding_seq drawn as a record being inserted draws it, until `end`.
       */
      const writer = async () => {
        let end!: () => void;
        const ended = new Promise<void>((r) => (end = r));
        let held!: (seq: bigint) => void;
        const drawn = new Promise<bigint>((r) => (held = r));
        const tx = db.transaction(async (t: Queryable) => {
          await t.query("select pg_advisory_xact_lock_shared(hashtextextended('usage-funding:m', 0))");
          const [row] = await t.query<{ seq: string }>("select nextval(pg_get_serial_sequence('usage_records', 'funding_seq'))::text as seq");
          held(BigInt(row!.seq));
          await ended;
        });
        const seq = await drawn;
        return {
          seq,
          stop: async () => {
            end();
            await tx;
          },
        };
      };
      const writing: WritingTops = new Map();
      const w1 = await writer();
      const t0 = Date.now();
      expect(await moveFundingMarks(db, db.clock.now(), writing)).toBe(0); // busy: notes the top and who writes
      const noted = writing.get(`m|${asset}`)!;
      expect(noted.top).toBeGreaterThanOrEqual(w1.seq);
      expect(noted.writers).toHaveLength(1);
      expect(await moveFundingMarks(db, db.clock.now(), writing)).toBe(0); // w1 still writes: its seq may yet be a record
      expect(await fundingMarkOf(db, "m", asset)).toBe(0n);
      // w1 ends and w2 starts at once: the marketplace is never free, yet the mark moves, to below the first record awaiting money.
      const w2 = await writer();
      await w1.stop();
      expect(await moveFundingMarks(db, db.clock.now(), writing)).toBe(1);
      expect(Date.now() - t0).toBeLessThan(2_000); // no step waited for the lock
      const mark = await fundingMarkOf(db, "m", asset);
      expect(mark).toBeGreaterThan(0n);
      expect(mark).toBeLessThan(w2.seq);
      expect(writing.get(`m|${asset}`)!.writers).toHaveLength(1); // w2, noted for the next step
      await w2.stop();
      expect((await verifyLedger(db)).violations).toEqual([]);
      const { marked, full } = await markedAndFull(db, asset);
      expect(marked).toEqual(full);
      // Money settled for the second record, a third awaits it: with the marketplace free again, the step reads the top under the lock.
      await s.settle(100n * USD, "m settles 2");
      await s.usage("o", "p", 100n * USD); // the next one awaits money
      expect(await moveFundingMarks(db, db.clock.now(), writing)).toBe(1);
      expect(writing.has(`m|${asset}`)).toBe(false);
      expect(await fundingMarkOf(db, "m", asset)).toBeGreaterThan(mark);
      expect((await verifyLedger(db)).violations).toEqual([]);
    },
  );
});
