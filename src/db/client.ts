import { PGlite } from "@electric-sql/pglite";
import postgres from "postgres";
import { systemClock, type Clock } from "../domain/clock.js";
import { guardDriverTypeReads } from "./driver-guard.js";

export type Row = Record<string, unknown>;

/**
 * The database could not be reached or went away (connection refused, reset or closed; the server
 * shutting down or starting; too many connections; SQLSTATE class 08, connection exception), or
 * this process is stopping: nothing was decided, and the same request may be retried later.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code ?? "";
  return (
    [
      "ECONNREFUSED",
      "ECONNRESET",
      "CONNECTION_CLOSED",
      "CONNECTION_ENDED",
      "CONNECTION_DESTROYED",
      "CONNECT_TIMEOUT",
      "57P01",
      "57P02",
      "57P03",
      "53300",
      "STOPPING",
      "EPIPE",
      "ETIMEDOUT",
      "EHOSTUNREACH",
      "ENETUNREACH",
      "EAI_AGAIN",
    ].includes(code) || /^08/.test(code)
  );
}

export interface QueryOptions {
  /**
   * Sent as an unnamed statement: planned at each run with its parameters, whatever the session's
   * plan cache mode (for a statement whose best plan depends on its values, on the read pool).
   */
  unnamed?: boolean;
}

/** The small surface every query in the project uses, the same on PostgreSQL and on PGlite. */
export interface Queryable {
  query<T = Row>(text: string, params?: unknown[], options?: QueryOptions): Promise<T[]>;
  /** The same, each row as an array of its columns in order (what drizzle's query builder reads: src/db/orm.ts). */
  queryValues(text: string, params?: unknown[]): Promise<unknown[][]>;
  /**
   * True inside a transaction: every statement runs on one connection, in the order it was sent,
   * so statements may be sent together without awaiting each other (src/db/in-order.ts). A pool
   * would run them on several connections at once.
   */
  readonly oneConnection?: boolean;
}

export interface Database extends Queryable {
  readonly kind: "postgres" | "pglite";
  /**
   * The service's clock (src/domain/clock.ts). It travels with the database handle so that every
   * use case that can write can also tell the time, the same time for the whole process.
   */
  readonly clock: Clock;
  /** Runs fn in one transaction (READ COMMITTED); commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /**
   * Where point reads (balances: src/services/read-source.ts, `pointRead`) run on this database
   * when it has a pool of its own for them (PostgreSQL, `readConnections`): read-only, with generic
   * plans allowed. Absent: they run on the database itself. Decisions about money never read here.
   */
  readonly reads?: Database;
  /** The underlying driver, for the migration runner. */
  readonly driver: { kind: "postgres"; sql: postgres.Sql; url: string; pooler: Pooler } | { kind: "pglite"; pg: PGlite };
}

export interface DatabaseOptions {
  /** postgres:// URL of a PostgreSQL server; when absent, the embedded PGlite is used. */
  url?: string;
  /** Folder of the embedded database; "memory://" keeps it in memory. */
  dataDir?: string;
  /** PGlite only: start from this dumped data folder (PGlite's dumpDataDir) instead of an empty one. */
  loadDataDir?: Blob;
  /**
   * PGlite only: its shared_buffers ("16MB"); PostgreSQL's default, 128MB, when absent. A small
   * database starts in about two thirds of the CPU time with 16MB (the test suite starts hundreds).
   */
  pgliteSharedBuffers?: string;
  /** Connection pool size on PostgreSQL. */
  maxConnections?: number;
  /**
   * PostgreSQL only: a second pool of this many connections for point reads (`Database.reads`),
   * opened as connections are needed. Its sessions are read-only (`default_transaction_read_only`)
   * and keep PostgreSQL's own choice between custom and generic plans (`plan_cache_mode=auto`),
   * each connection for at most `READ_CONNECTION_LIFETIME_S`. 0 or absent: reads share the pool.
   */
  readConnections?: number;
  /**
   * PostgreSQL only: "transaction" when the URL points at a pooler in transaction mode (PgBouncer's
   * pool_mode=transaction), which hands each transaction to whichever server connection is free:
   * no named prepared statements and no session startup parameters then. "none" (the default): a
   * direct connection.
   */
  pooler?: Pooler;
  /** The service's clock; the machine's time when absent. */
  clock?: Clock;
}

export type Pooler = "none" | "transaction";

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const clock = options.clock ?? systemClock;
  return options.url
    ? openPostgres(options.url, options.maxConnections ?? 10, clock, options.pooler ?? "none", options.readConnections ?? 0)
    : openPglite(options.dataDir ?? "memory://", options.loadDataDir, clock, options.pgliteSharedBuffers);
}

/**
 * How long a connection of the read pool lives (seconds). A generic plan is kept by its connection
 * until something invalidates it (a change of the table, its statistics renewed): one made while a
 * table was nearly empty (a sequential scan) would otherwise serve that connection however large
 * the table grows while its statistics are not renewed. A new connection plans again.
 */
export const READ_CONNECTION_LIFETIME_S = 60;

function openPostgres(url: string, max: number, clock: Clock, pooler: Pooler, readConnections: number): Database {
  // A failed type read on a new connection must not end the process (src/db/driver-guard.ts).
  guardDriverTypeReads();
  // Through a transaction pooler, consecutive statements of one client may run on different server
  // connections: a named prepared statement would be missing there (or another client's name would
  // collide with it), so every statement is sent unnamed (parsed, bound and run in one round).
  const prepare = pooler === "none";
  const sql = postgres(url, {
    ...driverOptions(pooler),
    max,
    // Statements are prepared, and PostgreSQL would switch a prepared statement to a generic plan
    // after five runs. A generic plan guesses 10 elements for an array parameter, so the set-based
    // lookups (`key = any($1::text[])` with 1,000 keys) got sequential scans while a table was
    // small, kept them as it grew, and then compared every row with every key: measured 400 ms per
    // 1,000-key lookup on 200,000 transfers instead of 1.5 ms. Custom plans see the array's size.
    // Unnamed statements (through a pooler) are planned anew at every run, with their parameters
    // (PostgreSQL builds a generic plan only for a statement run five times or more), so they need
    // no setting; PgBouncer refuses the startup parameter anyway.
    connection: prepare ? { application_name: "settlement-ledger", plan_cache_mode: "force_custom_plan" } : { application_name: "settlement-ledger" },
  });
  // Balance reads are point reads with scalar parameters, whose planning cost more than their
  // execution with custom plans (docs/performance.md, "Reads planned once"): their own pool lets
  // PostgreSQL keep a generic plan where it costs no more than a custom one. Through a pooler
  // statements are unnamed and planned at each run whatever the pool, so reads share the pool.
  const readSql =
    prepare && readConnections > 0
      ? postgres(url, {
          ...driverOptions(pooler),
          max: readConnections,
          max_lifetime: READ_CONNECTION_LIFETIME_S,
          connection: { application_name: "settlement-ledger", plan_cache_mode: "auto", default_transaction_read_only: true },
        })
      : undefined;
  const db = postgresDatabase(sql, url, clock, pooler, prepare);
  if (!readSql) return db;
  // Not enumerable: a copy of the handle made to change its behaviour ({ ...db, query }) reads
  // through that behaviour, not around it.
  return Object.defineProperty(
    {
      ...db,
      close: async () => {
        await Promise.all([sql.end({ timeout: 5 }), readSql.end({ timeout: 5 })]);
      },
    },
    "reads",
    { value: postgresDatabase(readSql, url, clock, pooler, prepare), enumerable: false },
  );
}

/** The driver's options common to both pools. */
function driverOptions(pooler: Pooler) {
  return {
    prepare: pooler === "none",
    // Through a transaction pooler, nothing is sent on a connection until its statement before has
    // ended. The driver otherwise pipelines a statement behind a busy connection's (when every
    // connection is busy). PgBouncer before 1.21 forwards the second statement to the server of the
    // first, and hands that server back to its pool when the first one ends (its ReadyForQuery, idle):
    // the second's answer then comes from a server linked to no client, PgBouncer drops it ("got
    // packet from server when not linked") and the statement never ends. An unnamed statement with
    // parameters is parsed and described first, then bound (two steps), so any of them can be the
    // second. Seen as requests that never ended after a restart under load; tests/integration/pooler.test.ts.
    // (An option of the driver, src/index.js, that its type declarations leave out.)
    ...({ max_pipeline: pooler === "transaction" ? 0 : 100 } as object),
    onnotice: () => {},
    // After a lost connection, wait at most a second before reconnecting (the driver's default
    // grows to 20 s after repeated failures, which keeps the service down long after the database
    // is back).
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
    // A connection attempt the server accepts but never answers (seen while it crashes or starts)
    // fails after 5 s instead of the driver's 30 s, so that a request is answered 503 in time.
    connect_timeout: 5,
  };
}

function postgresDatabase(sql: postgres.Sql, url: string, clock: Clock, pooler: Pooler, prepare: boolean): Database {
  const wrap = (s: postgres.Sql | postgres.TransactionSql, oneConnection = false): Queryable => ({
    oneConnection,
    async query<T>(text: string, params: unknown[] = [], options?: QueryOptions) {
      return (await s.unsafe(text, params as postgres.ParameterOrJSON<never>[], { prepare: prepare && !options?.unnamed })) as unknown as T[];
    },
    async queryValues(text: string, params: unknown[] = []) {
      return (await s.unsafe(text, params as postgres.ParameterOrJSON<never>[], { prepare }).values()) as unknown as unknown[][];
    },
  });
  const root = wrap(sql);
  return {
    kind: "postgres" as const,
    clock,
    driver: { kind: "postgres", sql, url, pooler },
    query: root.query,
    queryValues: root.queryValues,
    transaction: <T>(fn: (tx: Queryable) => Promise<T>) => sql.begin((tx) => fn(wrap(tx, true))) as Promise<T>,
    close: () => sql.end({ timeout: 5 }),
  };
}

async function openPglite(dataDir: string, loadDataDir: Blob | undefined, clock: Clock, sharedBuffers: string | undefined): Promise<Database> {
  const pg = await PGlite.create(dataDir, {
    ...(loadDataDir ? { loadDataDir } : {}),
    ...(sharedBuffers ? { startParams: [...PGlite.defaultStartParams, "-c", `shared_buffers=${sharedBuffers}`] } : {}),
  });
  return {
    kind: "pglite",
    clock,
    driver: { kind: "pglite", pg },
    async query<T>(text: string, params: unknown[] = []) {
      return (await pg.query<T>(text, params)).rows;
    },
    async queryValues(text: string, params: unknown[] = []) {
      return (await pg.query<unknown[]>(text, params, { rowMode: "array" })).rows;
    },
    transaction: <T>(fn: (tx: Queryable) => Promise<T>) =>
      pg.transaction((tx) =>
        fn({
          oneConnection: true,
          async query<R>(text: string, params: unknown[] = []) {
            return (await tx.query<R>(text, params)).rows;
          },
          async queryValues(text: string, params: unknown[] = []) {
            return (await tx.query<unknown[]>(text, params, { rowMode: "array" })).rows;
          },
        }),
      ),
    close: () => pg.close(),
  };
}
