import { mkdirSync } from "node:fs";
import { configuredClock, type Config } from "../config.js";
import { openDatabase, type Database } from "./client.js";
import { runMigrations } from "./migrate.js";
import { deploymentId } from "./queries/deployment.js";
import { claimDataDir } from "./pglite-lock.js";

/** Opens the configured database (PostgreSQL or embedded PGlite) and applies pending migrations. */
export async function openConfiguredDatabase(config: Config): Promise<Database> {
  let release = () => {};
  if (!config.DATABASE_URL && !config.PGLITE_DATA_DIR.startsWith("memory://")) {
    mkdirSync(config.PGLITE_DATA_DIR, { recursive: true });
    try {
      release = claimDataDir(config.PGLITE_DATA_DIR);
    } catch (err) {
      console.error((err as Error).message);
      process.exit(1);
    }
  }
  const db = await openDatabase({
    url: config.DATABASE_URL,
    dataDir: config.PGLITE_DATA_DIR,
    maxConnections: config.DB_POOL_SIZE,
    readConnections: config.DB_READ_POOL_SIZE,
    pooler: config.DATABASE_POOLER,
    clock: configuredClock(config),
  });
  await runMigrations(db);
  // The deployment id (payout ids derive from it) made now, not by the first payout request: a
  // request refused before it writes leaves no row behind.
  await deploymentId(db);
  const close = db.close.bind(db);
  return Object.assign(db, {
    async close() {
      await close();
      release();
    },
  });
}
