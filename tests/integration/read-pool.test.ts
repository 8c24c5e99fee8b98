import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, READ_CONNECTION_LIFETIME_S, type Database } from "../../src/db/client.js";
import { operatorBalances } from "../../src/db/queries/operator-views.js";
import { closeLedgerContext, createLedgerContext, type LedgerContext } from "../../src/services/context.js";
import { readChosen } from "../../src/services/read-source.js";
import { freshDatabase, NEEDS_PG, onRealPostgres, testPooler, type TestDatabase } from "../support/db.js";
import { testClock } from "../support/clock.js";

/**
 * Balance reads run on a pool of their own on PostgreSQL (DB_READ_POOL_SIZE): its sessions cannot
 * write, and PostgreSQL may keep a generic plan for a read instead of planning it at every run,
 * which was most of what a balance read cost. The writers' pool, and the reports, keep custom
 * plans. docs/performance.md, "Reads planned once".
 */
const direct = onRealPostgres && testPooler === "none";
const suffix = direct ? "" : ` ${NEEDS_PG} (and no pooler)`;

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

const setting = async (on: Database, name: string) => (await on.query<{ v: string }>("select current_setting($1) as v", [name]))[0]!.v;

describe.skipIf(!direct)(`the read pool${suffix}`, () => {
  it("is a pool of its own: read-only, with PostgreSQL's own choice of plans; the writers' pool plans every run", async () => {
    expect(db.reads).toBeDefined();
    expect(db.reads).not.toBe(db);
    expect(await setting(db.reads!, "plan_cache_mode")).toBe("auto");
    expect(await setting(db.reads!, "transaction_read_only")).toBe("on");
    expect(await setting(db, "plan_cache_mode")).toBe("force_custom_plan");
    expect(await setting(db, "transaction_read_only")).toBe("off");
  });

  it("refuses every kind of write, in a statement or a transaction, and nothing is written", async () => {
    const before = await db.query<{ n: string }>("select count(*)::text as n from marketplaces");
    const writes = [
      () => db.reads!.query("insert into marketplaces (id, name) values ('read-pool-mp', 'x')"),
      () => db.reads!.query("update account_balances set debits_posted = debits_posted + 1"),
      () => db.reads!.query("delete from api_keys"),
      () => db.reads!.transaction((tx) => tx.query("insert into marketplaces (id, name) values ('read-pool-mp2', 'x')")),
      () => db.reads!.query("select nextval('entries_id_seq')"),
    ];
    for (const write of writes) await expect(write()).rejects.toMatchObject({ code: "25006" });
    expect(await db.query<{ n: string }>("select count(*)::text as n from marketplaces")).toEqual(before);
  });

  it("keeps a generic plan for a read run again and again on one connection", async () => {
    const one = await openDatabase({ url: db.env.DATABASE_URL!, maxConnections: 1, readConnections: 1, clock: testClock });
    try {
      for (let i = 0; i < 12; i++) await operatorBalances(one.reads!, `op-${i}`);
      const [plans] = await one.reads!.query<{ generic: number; custom: number }>(
        `select generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements where statement like '%operator_earned%'`,
      );
      expect(plans!.custom).toBeLessThanOrEqual(5);
      expect(plans!.generic).toBeGreaterThanOrEqual(7);
      // The writers' pool plans the same statement at every run.
      for (let i = 0; i < 12; i++) await operatorBalances(one, `op-${i}`);
      const [writers] = await one.query<{ generic: number; custom: number }>(
        `select generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements where statement like '%operator_earned%'`,
      );
      expect(writers).toEqual({ generic: 0, custom: 12 });
    } finally {
      await one.close();
    }
  });

  it("serves point reads (balances) on the primary; reports, statements and decisions stay on the writers' pool", async () => {
    const on = async (options?: { pointRead?: boolean }) => {
      let seen: Database | undefined;
      const r = await readChosen(
        ctx,
        undefined,
        async (d) => {
          seen = d;
          return setting(d, "transaction_read_only");
        },
        options,
      );
      return { r, seen };
    };
    const point = await on({ pointRead: true });
    expect(point.r).toEqual({ value: "on", source: "primary", stalenessMs: 0 });
    expect(point.seen).toBe(db.reads);
    const report = await on();
    expect(report.r).toEqual({ value: "off", source: "primary", stalenessMs: 0 });
    expect(report.seen).toBe(db);
  });

  it("plans an unnamed statement at each run with its values, even on the read pool", async () => {
    const one = await openDatabase({ url: db.env.DATABASE_URL!, maxConnections: 1, readConnections: 1, clock: testClock });
    try {
      const text = "select count(*)::int as n from usage_records where marketplace_id = $1 /* walk */";
      for (let i = 0; i < 8; i++) await one.reads!.query(text, [`m-${i}`], { unnamed: true });
      const kept = await one.reads!.query("select name from pg_prepared_statements where statement like '%/* walk */%' and name <> ''");
      expect(kept).toEqual([]);
    } finally {
      await one.close();
    }
  });

  it("a copy of the handle made to change its behaviour reads through it, not around it", () => {
    const wrapped = { ...db, query: db.query };
    expect(wrapped.reads).toBeUndefined();
  });

  it("each connection lives a bounded time, so a generic plan made while a table was small is made again", () => {
    expect(READ_CONNECTION_LIFETIME_S).toBeGreaterThan(0);
    expect(READ_CONNECTION_LIFETIME_S).toBeLessThanOrEqual(300);
  });
});

describe("without a read pool", () => {
  it("DB_READ_POOL_SIZE=0 (or PGlite, or a pooler): reads run on the database itself", async () => {
    if (!onRealPostgres) {
      expect(db.reads).toBeUndefined();
      const r = await readChosen(ctx, undefined, async (on) => on);
      expect(r.value).toBe(db);
      return;
    }
    const none = await openDatabase({ url: db.env.DATABASE_URL!, maxConnections: 1, readConnections: 0, clock: testClock, pooler: testPooler });
    try {
      expect(none.reads).toBeUndefined();
    } finally {
      await none.close();
    }
  });
});
