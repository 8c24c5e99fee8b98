import { loadConfig } from "./config.js";
import { openConfiguredDatabase } from "./db/open.js";
import { createLogger } from "./log.js";
import { createLedgerContext } from "./services/context.js";
import { startWorkers } from "./workers/start.js";

const config = loadConfig();
const log = createLogger(config.LOG_LEVEL);
const db = await openConfiguredDatabase(config);
const ctx = createLedgerContext(db, {
  maxItems: config.GROUP_COMMIT_MAX_ITEMS,
  maxConcurrent: config.GROUP_COMMIT_MAX_CONCURRENT,
  windowMs: config.GROUP_COMMIT_WINDOW_MS,
});
const stopWorkers = startWorkers(db, config, log);
log.info({ database: config.DATABASE_URL ? "postgres" : "pglite" }, "ledger started");

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, "shutting down");
  await ctx.transfers.close();
  await stopWorkers();
  await db.close();
  log.info("stopped");
  process.exit(0);
}
process.once("SIGINT", () => void shutdown("SIGINT"));
process.once("SIGTERM", () => void shutdown("SIGTERM"));
