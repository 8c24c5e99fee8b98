import { PGlite } from "@electric-sql/pglite";
import postgres from "postgres";

export type Row = Record<string, unknown>;

/** The small surface every query in the project uses, the same on PostgreSQL and on PGlite. */
export interface Queryable {
  query<T = Row>(text: string, params?: unknown[]): Promise<T[]>;
}

export interface Database extends Queryable {
  readonly kind: "postgres" | "pglite";
  /** Runs fn in one transaction (READ COMMITTED); commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** The underlying driver, for the migration runner. */
  readonly driver: { kind: "postgres"; sql: postgres.Sql; url: string } | { kind: "pglite"; pg: PGlite };
}

export interface DatabaseOptions {
  /** postgres:// URL of a PostgreSQL server; when absent, the embedded PGlite is used. */
  url?: string;
  /** Folder of the embedded database; "memory://" keeps it in memory. */
  dataDir?: string;
  /** PGlite only: start from this dumped data folder (PGlite's dumpDataDir) instead of an empty one. */
  loadDataDir?: Blob;
  /** Connection pool size on PostgreSQL. */
  maxConnections?: number;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.url ? openPostgres(options.url, options.maxConnections ?? 10) : openPglite(options.dataDir ?? "memory://", options.loadDataDir);
}

function openPostgres(url: string, max: number): Database {
  const sql = postgres(url, {
    max,
    onnotice: () => {},
    connection: { application_name: "settlement-ledger" },
  });
  const wrap = (s: postgres.Sql | postgres.TransactionSql): Queryable => ({
    async query<T>(text: string, params: unknown[] = []) {
      return (await s.unsafe(text, params as postgres.ParameterOrJSON<never>[], { prepare: true })) as unknown as T[];
    },
  });
  const root = wrap(sql);
  return {
    kind: "postgres",
    driver: { kind: "postgres", sql, url },
    query: root.query,
    transaction: <T>(fn: (tx: Queryable) => Promise<T>) => sql.begin((tx) => fn(wrap(tx))) as Promise<T>,
    close: () => sql.end({ timeout: 5 }),
  };
}

async function openPglite(dataDir: string, loadDataDir?: Blob): Promise<Database> {
  const pg = await PGlite.create(dataDir, loadDataDir ? { loadDataDir } : {});
  return {
    kind: "pglite",
    driver: { kind: "pglite", pg },
    async query<T>(text: string, params: unknown[] = []) {
      return (await pg.query<T>(text, params)).rows;
    },
    transaction: <T>(fn: (tx: Queryable) => Promise<T>) =>
      pg.transaction((tx) =>
        fn({
          async query<R>(text: string, params: unknown[] = []) {
            return (await tx.query<R>(text, params)).rows;
          },
        }),
      ),
    close: () => pg.close(),
  };
}
