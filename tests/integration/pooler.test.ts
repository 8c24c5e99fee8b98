/**
 * The service through a connection pooler in transaction mode (PgBouncer pool_mode=transaction,
 * `npm run db:pgbouncer`), which hands each transaction to whichever server connection is free.
 * Runs with TEST_POOLER_URL (e.g. postgres://postgres@127.0.0.1:6432/postgres); skipped without it.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "../../src/db/client.js";
import { openReplicaRouter } from "../../src/db/replica.js";
import { migrationsFolder, pendingMigrations, runMigrations } from "../../src/db/migrate.js";
import { closeLedgerContext, createLedgerContext, type LedgerContext } from "../../src/services/context.js";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { testClock } from "../support/clock.js";
import { adminClient } from "../support/db.js";
import { withDatabase } from "../support/pg-url.js";
import { arrivedOnReplica } from "../support/replica.js";
import { usageWorld } from "../support/usage-world.js";

const poolerUrl = process.env.TEST_POOLER_URL;
/** A streaming replica of the pooler's server (npm run db:replica), when there is one. */
const replicaUrl = process.env.TEST_REPLICA_URL;
const NEEDS_POOLER = "[needs a pooler in transaction mode: runs only with TEST_POOLER_URL, e.g. after npm run db:pgbouncer]";

const name = `ledger_pooler_${randomBytes(6).toString("hex")}`;
const open = (maxConnections: number) => openDatabase({ url: withDatabase(poolerUrl!, name), maxConnections, clock: testClock, pooler: "transaction" });
let a: Database;
let b: Database;
/** One client connection each: what one of them leaves behind on a server connection, the other would meet. */
let a1: Database;
let b1: Database;

async function serverPid(db: Database): Promise<number> {
  return (await db.query<{ pid: number }>("select pg_backend_pid() as pid"))[0]!.pid;
}

async function tryLock(db: Database, key: number): Promise<boolean> {
  return db.transaction(async (tx) => (await tx.query<{ ok: boolean }>("select pg_try_advisory_xact_lock($1) as ok", [key]))[0]!.ok);
}

describe.skipIf(!poolerUrl)(`through a pooler in transaction mode ${NEEDS_POOLER}`, () => {
  beforeAll(async () => {
    const admin = adminClient(poolerUrl!);
    try {
      await admin.unsafe(`create database ${name}`);
    } finally {
      await admin.end();
    }
    [a, b, a1, b1] = await Promise.all([open(4), open(4), open(1), open(1)]);
    // Two processes starting at once, both through the pooler: the first migrates, the second waits
    // for it and finds nothing left to do.
    await Promise.all([runMigrations(a), runMigrations(b)]);
  });
  afterAll(async () => {
    await Promise.all([a, b, a1, b1].map((db) => db?.close()));
    const admin = adminClient(poolerUrl!);
    try {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
    } finally {
      await admin.end();
    }
  });

  it("migrates through the pooler, each migration once, even with two runners at once", async () => {
    const { readMigrationFiles } = await import("drizzle-orm/migrator");
    const files = readMigrationFiles({ migrationsFolder });
    const rows = await a.query<{ hash: string }>("select hash from drizzle.__drizzle_migrations order by id");
    expect(rows.map((r) => r.hash)).toEqual(files.map((f) => f.hash));
    expect(await pendingMigrations(b)).toBe(0);
    await runMigrations(b1);
    expect((await a.query("select 1 from drizzle.__drizzle_migrations")).length).toBe(files.length);
  });

  it("hands one server connection to different clients between their transactions", async () => {
    const seenA = new Set<number>();
    const seenB = new Set<number>();
    for (let i = 0; i < 20; i++) {
      seenA.add(await serverPid(a1));
      seenB.add(await serverPid(b1));
    }
    // Directly, each client would keep its own server process; through the pooler they share them.
    expect([...seenA].some((pid) => seenB.has(pid))).toBe(true);
  });

  it("holds an advisory transaction lock for its transaction only, and leaves none behind", async () => {
    const key = 42_4242;
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const hasLock = new Promise<void>((r) => (locked = r));
    const first = a1.transaction(async (tx) => {
      await tx.query("select pg_advisory_xact_lock($1)", [key]);
      locked();
      await held;
    });
    await hasLock;
    // Meanwhile the other client's transactions run, on another server connection, and meet the lock.
    expect(await tryLock(b1, key)).toBe(false);
    expect(await tryLock(b1, key + 1)).toBe(true);
    release();
    await first;
    expect(await tryLock(b1, key)).toBe(true);
    const [left] = await b.query<{ n: number }>(
      `select count(*)::int as n from pg_locks l join pg_stat_activity s on s.pid = l.pid
        where l.locktype = 'advisory' and s.datname = current_database()`,
    );
    expect(left!.n).toBe(0);
  });

  it("keeps a transaction's settings in its transaction", async () => {
    await a1.transaction((tx) => tx.query("select set_config('TimeZone', 'Pacific/Apia', true)"));
    for (let i = 0; i < 10; i++) {
      expect((await b1.query<{ tz: string }>("select current_setting('TimeZone') as tz"))[0]!.tz).not.toBe("Pacific/Apia");
    }
  });

  it("runs the same statements from many clients at once with no prepared statement left on the server", async () => {
    const texts = Array.from({ length: 10 }, (_, i) => `select $1::int + ${i} as n`);
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => [a, b, a1, b1][i % 4]!.query<{ n: number }>(texts[i % 10]!, [i])));
    expect(answers.map((r) => r[0]!.n)).toEqual(Array.from({ length: 200 }, (_, i) => i + (i % 10)));
    for (const db of [a, b]) expect((await db.query<{ n: number }>("select count(*)::int as n from pg_prepared_statements"))[0]!.n).toBe(0);
  });

  it("answers statements sent while its one connection is busy (nothing pipelined behind another statement's end)", async () => {
    // One client connection, busy with a statement; a second statement (with parameters: the
    // driver parses and describes it first, then binds it) is asked for meanwhile. Pipelined on the
    // same connection, its first messages would reach the server PgBouncer links to the first
    // statement, which PgBouncer hands back to its pool at the first statement's end: the answer
    // then arrives on a server linked to nobody, is dropped, and the second statement never ends.
    const timeout = (ms: number) => new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms));
    for (let round = 0; round < 5; round++) {
      const busy = a1.query<{ slept: string }>("select pg_sleep(0.05)::text as slept");
      const asked = a1.query<{ n: number }>("select $1::int + 1 as n", [round]);
      const [slept, answered] = await Promise.race([Promise.all([busy, asked]), timeout(10_000)]);
      expect(slept).toEqual([{ slept: "" }]);
      expect(answered).toEqual([{ n: round + 1 }]);
    }
  });

  it("ingests usage and reads the balances it moved", async () => {
    const ctx: LedgerContext = createLedgerContext(a, { maxConcurrent: 4 });
    try {
      const w = await usageWorld(ctx);
      // 3,600 GPU-seconds at 0.000694 USDC/s = 2.4984 USDC each; 10% marketplace, 1% protocol
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => ctx.usage.submit({ marketplaceId: w.m, input: w.record(`job-${i}`) })));
      expect(results.map((r) => r.status)).toEqual(results.map(() => "accepted"));
      expect(await w.posted(w.accounts.prepaid)).toBe(1_000_000_000n - 20n * 2_498_400n);
      expect(await w.posted(w.accounts.operator(0))).toBe(20n * 2_223_576n);
      expect(await w.posted(w.accounts.marketplaceFees)).toBe(20n * 249_840n);
      const again = await ctx.usage.submit({ marketplaceId: w.m, input: w.record("job-0") });
      expect(again.status).toBe("duplicate");
    } finally {
      await closeLedgerContext(ctx);
    }
    expect((await verifyLedger(b)).violations).toEqual([]);
  });

  it.skipIf(!replicaUrl)("reads from a streaming replica with the primary behind the pooler: its WAL position is sampled through the pooler too", async () => {
    const replicaDb = withDatabase(replicaUrl!, name);
    await arrivedOnReplica(replicaDb);
    const router = await openReplicaRouter(a, replicaDb, { maxLagMs: 1_000, waitMs: 2_000, maxConnections: 2, warn: () => {} });
    try {
      // A write through the pooler, then a read that must see it: the replica holds its position.
      const position = await router.position();
      const choice = await router.choose(position);
      expect(choice.source).toBe("replica");
      // Without a position, the replica serves while it is within the bound: the sampler works.
      let unbound = await router.choose();
      for (let i = 0; i < 50 && unbound.source !== "replica"; i++) {
        await new Promise((r) => setTimeout(r, 100));
        unbound = await router.choose();
      }
      expect(unbound.source).toBe("replica");
    } finally {
      await router.close();
    }
  });
});
