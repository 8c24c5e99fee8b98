import { Settlements } from "../chain/settlement.js";
import { exitOnSettingsConflicts } from "../services/chain-settings.js";
import { loadChainsOrExit, loadConfig } from "../config.js";
import { openConfiguredDatabase } from "../db/open.js";
import { createLogger } from "../log.js";
import { onStopSignal, processLogger } from "../cluster.js";
import { startWorkers } from "./start.js";

/** `npm run worker`: the background workers alone, for running them apart from the API processes. */
const config = loadConfig();
const log = processLogger(createLogger(config.LOG_LEVEL), "worker");
if (config.CLOCK_START)
  log.warn({ clock_start: config.CLOCK_START }, "CLOCK_START is set: the workers' clock started at that instant, not at the machine's time");
const settlements = new Settlements(loadChainsOrExit(config));
const db = await openConfiguredDatabase(config);
await exitOnSettingsConflicts(db, settlements);
const stop = startWorkers(db, config, log, settlements);
log.info({ chains: settlements.chains.map((c) => ({ name: c.settings.name, chain_id: c.chainId.toString(), signer: c.sender })) }, "workers started");
process.send?.({ type: "ready" }); // to the supervising process, when there is one
onStopSignal(async (signal) => {
  log.info({ signal }, "stopping workers");
  await stop();
  await db.close();
  process.exit(0);
});
