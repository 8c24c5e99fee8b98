import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import type { Database } from "./client.js";

/** The repository's migrations/, from src/db (run by tsx) or from dist/src/db (the compiled service). */
export const migrationsFolder = [new URL("../../migrations", import.meta.url), new URL("../../../migrations", import.meta.url)]
  .map((u) => fileURLToPath(u))
  .find((dir) => existsSync(join(dir, "meta", "_journal.json")))!;

/** Arbitrary constant: the advisory lock that keeps two starting processes from migrating at once. */
const MIGRATION_LOCK = 7_420_001;

/** Applies the committed drizzle-kit migrations that the database has not seen yet. */
export async function runMigrations(db: Database): Promise<void> {
  if (db.driver.kind === "pglite") {
    await migratePglite(drizzlePglite(db.driver.pg), { migrationsFolder });
    return;
  }
  // One connection, so that the session-level advisory lock covers every statement of the run.
  const conn = postgres(db.driver.url, { max: 1, onnotice: () => {} });
  try {
    await conn`select pg_advisory_lock(${MIGRATION_LOCK})`;
    await migratePostgres(drizzlePostgres(conn), { migrationsFolder });
  } finally {
    await conn.end();
  }
}

/** Number of migration files the code ships that the database has not applied (0 when current). */
export async function pendingMigrations(db: Database): Promise<number> {
  const { readMigrationFiles } = await import("drizzle-orm/migrator");
  const shipped = readMigrationFiles({ migrationsFolder });
  try {
    const rows = await db.query<{ n: string }>("select count(*)::text as n from drizzle.__drizzle_migrations");
    return Math.max(0, shipped.length - Number(rows[0]?.n ?? 0));
  } catch {
    return shipped.length;
  }
}
