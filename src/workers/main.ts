import { Settlements } from "../chain/settlement.js";
import { exitOnSettingsConflicts } from "../services/chain-settings.js";
import { loadChainsOrExit, loadConfig } from "../config.js";
import { openConfiguredDatabase } from "../db/open.js";
import { createLogger } from "../log.js";
import { startWorkers } from "./start.js";

/** `npm run worker`: the background workers alone, for running them apart from the API processes. */
const config = loadConfig();
const log = createLogger(config.LOG_LEVEL);
if (config.CLOCK_START)
  log.warn({ clock_start: config.CLOCK_START }, "CLOCK_START is set: the workers' clock started at that instant, not at the machine's time");
const settlements = new Settlements(loadChainsOrExit(config));
const db = await openConfiguredDatabase(config);
await exitOnSettingsConflicts(db, settlements);
const stop = startWorkers(db, config, log, settlements);
log.info({ chains: settlements.chains.map((c) => ({ name: c.settings.name, chain_id: c.chainId.toString(), signer: c.sender })) }, "workers started");
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, async () => {
    log.info({ signal }, "stopping workers");
    await stop();
    await db.close();
    process.exit(0);
  });
}
