import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { readMigrationFiles } from "drizzle-orm/migrator";
import type { Database } from "./client.js";

/** The repository's migrations/, from src/db (run by tsx) or from dist/src/db (the compiled service). */
export const migrationsFolder = [new URL("../../migrations", import.meta.url), new URL("../../../migrations", import.meta.url)]
  .map((u) => fileURLToPath(u))
  .find((dir) => existsSync(join(dir, "meta", "_journal.json")))!;

/** Arbitrary constant: the advisory lock that keeps two starting processes from migrating at once. */
const MIGRATION_LOCK = 7_420_001;

/**
 * Applies the committed drizzle-kit migrations that the database has not seen yet.
 *
 * On PostgreSQL the whole run is one transaction that first takes a transaction-level advisory
 * lock: a second process waits for the first to commit, then finds nothing left to apply. It holds
 * no session state, so it runs the same through a pooler in transaction mode (DATABASE_POOLER). The
 * bookkeeping is drizzle's own (drizzle.__drizzle_migrations, a row per applied migration, the
 * newest created_at decides what is pending), so databases migrated by either runner agree.
 */
export async function runMigrations(db: Database): Promise<void> {
  if (db.driver.kind === "pglite") {
    await migratePglite(drizzlePglite(db.driver.pg), { migrationsFolder });
    return;
  }
  const migrations = readMigrationFiles({ migrationsFolder });
  await db.transaction(async (tx) => {
    await tx.query("select pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await tx.query("create schema if not exists drizzle");
    await tx.query("create table if not exists drizzle.__drizzle_migrations (id serial primary key, hash text not null, created_at bigint)");
    const [last] = await tx.query<{ created_at: string }>(
      "select created_at::text as created_at from drizzle.__drizzle_migrations order by created_at desc limit 1",
    );
    for (const migration of migrations) {
      if (last && Number(last.created_at) >= migration.folderMillis) continue;
      for (const statement of migration.sql) await tx.query(statement);
      await tx.query('insert into drizzle.__drizzle_migrations ("hash", "created_at") values ($1, $2)', [migration.hash, migration.folderMillis]);
    }
  });
}

/** Number of migration files the code ships that the database has not applied (0 when current). */
export async function pendingMigrations(db: Database): Promise<number> {
  const shipped = readMigrationFiles({ migrationsFolder });
  try {
    const rows = await db.query<{ n: string }>("select count(*)::text as n from drizzle.__drizzle_migrations");
    return Math.max(0, shipped.length - Number(rows[0]?.n ?? 0));
  } catch {
    return shipped.length;
  }
}
