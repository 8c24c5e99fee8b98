import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { inject } from "vitest";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { deploymentId } from "../../src/db/queries/deployment.js";
import { openDatabase, type Database, type Pooler } from "../../src/db/client.js";
import type { Clock } from "../../src/domain/clock.js";
import { testClock } from "./clock.js";
import { withDatabase } from "./pg-url.js";

/** The real PostgreSQL server under test, when TEST_DATABASE_URL is set. */
export const realPostgresUrl = process.env.TEST_DATABASE_URL;
export const onRealPostgres = realPostgresUrl !== undefined;
/** Title suffix for tests that only run on a real server (several connections, real concurrency). */
export const NEEDS_PG = "[needs several connections: runs only with TEST_DATABASE_URL]";
/**
 * "transaction" when TEST_DATABASE_URL goes through a pooler in transaction mode (PgBouncer,
 * `npm run db:pgbouncer`): every database the tests open, and every service process they start,
 * then uses the service's pooler setting (DATABASE_POOLER).
 */
export const testPooler: Pooler = process.env.DATABASE_POOLER === "transaction" ? "transaction" : "none";
/** A one-connection admin client for CREATE/DROP DATABASE (unnamed statements: safe through a pooler). */
export const adminClient = (url: string) => postgres(url, { max: 1, prepare: false, onnotice: () => {} });

export interface TestDatabase extends Database {
  /**
   * Environment that points the service's own commands (npm run verify, ...) at this database, and,
   * when the tests run on a shifted clock, starts their clock where the test clock is at the moment
   * it is read (so a process spawned later agrees with the test on what time it is).
   */
  readonly env: Record<string, string>;
  /** Closes and deletes the database. */
  destroy(): Promise<void>;
}

/** A fresh, migrated, empty database: a copy of the template on PostgreSQL, or an in-memory PGlite. */
export async function freshDatabase(options: { maxConnections?: number; onDisk?: boolean; clock?: Clock } = {}): Promise<TestDatabase> {
  const clock = options.clock ?? testClock;
  if (!realPostgresUrl) {
    const dir = options.onDisk ? mkdtempSync(join(tmpdir(), "ledger-test-")) : "memory://";
    const template = new Blob([readFileSync(inject("pgliteTemplate"))]);
    // 16MB of shared buffers (not 128MB): the suite starts hundreds of these small databases, each
    // in about two thirds of the CPU time that way.
    const db = await openDatabase({ dataDir: dir, loadDataDir: template, clock, pgliteSharedBuffers: "16MB" });
    // As the service does at start (src/db/open.ts): each database its own deployment id.
    await deploymentId(db);
    return Object.assign(withEnv(db, { PGLITE_DATA_DIR: dir }), {
      async destroy() {
        await db.close().catch(() => {});
        if (options.onDisk) rmSync(dir, { recursive: true, force: true });
      },
    });
  }
  const name = `ledger_test_${randomBytes(6).toString("hex")}`;
  const admin = adminClient(realPostgresUrl);
  try {
    await admin.unsafe(`create database ${name} template ${inject("pgTemplate")}`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(realPostgresUrl, name);
  // Few connections each: test files run side by side on one server (max_connections 100), with
  // the service's own processes beside them.
  // Two more for balance reads (the service opens DB_READ_POOL_SIZE, 4), so the suite reads as the service does.
  const db = await openDatabase({ url, maxConnections: options.maxConnections ?? 8, readConnections: 2, clock, pooler: testPooler });
  await deploymentId(db);
  return Object.assign(withEnv(db, { DATABASE_URL: url, DATABASE_POOLER: testPooler }), {
    async destroy() {
      await db.close();
      const admin = adminClient(realPostgresUrl!);
      try {
        await admin.unsafe(`drop database if exists ${name} with (force)`);
      } finally {
        await admin.end();
      }
    },
  });
}

function withEnv<T extends object>(db: T, env: Record<string, string>): T & { readonly env: Record<string, string> } {
  return Object.defineProperty(db, "env", {
    get: () => (process.env.CLOCK_START ? { ...env, CLOCK_START: testClock.now().toISOString() } : { ...env }),
    enumerable: true,
  }) as T & { readonly env: Record<string, string> };
}

/** Row counts of the ledger tables, to show that a refused request wrote nothing. */
export async function tableCounts(db: Database): Promise<Record<string, number>> {
  const [row] = await db.query<Record<string, string>>(`
    select (select count(*) from assets)::text as assets, (select count(*) from accounts)::text as accounts,
           (select count(*) from transfers)::text as transfers, (select count(*) from entries)::text as entries,
           (select sum(debits_posted + credits_posted + debits_pending + credits_pending) from account_balances)::text as balance_sum`);
  return Object.fromEntries(Object.entries(row!).map(([k, v]) => [k, Number(v ?? 0)]));
}

/**
 * Runs statements (each with the same parameters, if any) in one transaction with triggers and rules off (`session_replication_role =
 * replica`), as a superuser could: how tests change what the ledger's triggers guard, to show that
 * `verify` names it.
 */
export async function withTriggersOff(db: Database, statements: string[], params?: unknown[]): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query("set local session_replication_role = replica");
    for (const sql of statements) await tx.query(sql, params);
  });
}
