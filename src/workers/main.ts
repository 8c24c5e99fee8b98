import { loadConfig } from "../config.js";
import { openConfiguredDatabase } from "../db/open.js";
import { createLogger } from "../log.js";
import { startWorkers } from "./start.js";

/** `npm run worker`: the background workers alone, for running them apart from the API processes. */
const config = loadConfig();
const log = createLogger(config.LOG_LEVEL);
const db = await openConfiguredDatabase(config);
const stop = startWorkers(db, config, log);
log.info("workers started");
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, async () => {
    log.info({ signal }, "stopping workers");
    await stop();
    await db.close();
    process.exit(0);
  });
}
