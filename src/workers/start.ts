import type { Settlements } from "../chain/settlement.js";
import type { Config } from "../config.js";
import type { Database } from "../db/client.js";
import type { Logger } from "../log.js";
import { expireUsageHolds } from "../services/holds.js";
import { expireHolds } from "./hold-expirer.js";
import { sealJournal } from "../db/journal-seals.js";
import { startLoop } from "./loop.js";
import type { FaultPoint } from "../domain/payouts.js";
import { PayoutWorker } from "./payout-worker.js";

/** Starts the background workers; the returned function stops them and waits for running ticks. */
export function startWorkers(db: Database, config: Config, log: Logger, settlements: Settlements): () => Promise<void> {
  const killAt = new Set((config.FAULT_KILL_AT ?? "").split(",").filter(Boolean));
  const payouts = new PayoutWorker(db, settlements, {
    log,
    fault: (point: FaultPoint) => {
      if (!killAt.has(point)) return;
      log.warn({ worker: "payouts", fault: point }, "FAULT_KILL_AT: killing this process");
      process.kill(process.pid, "SIGKILL");
    },
  });
  const loops = [
    startLoop("payouts", config.PAYOUT_INTERVAL_MS, () => payouts.tick(), log),
    startLoop(
      "hold-expirer",
      config.HOLD_EXPIRY_INTERVAL_MS,
      async () => {
        const n = await expireHolds(db);
        if (n > 0) log.info({ worker: "hold-expirer", expired: n }, "expired holds");
      },
      log,
    ),
    startLoop(
      "usage-hold-expirer",
      config.HOLD_EXPIRY_INTERVAL_MS,
      async () => {
        const n = await expireUsageHolds(db);
        if (n > 0) log.info({ worker: "usage-hold-expirer", expired: n }, "closed expired usage holds");
      },
      log,
    ),
    startLoop(
      "journal-sealer",
      config.JOURNAL_SEAL_INTERVAL_MS,
      async () => {
        // A backlog is sealed in bounded seals, a few per tick (so that stopping never waits long).
        let seals = 0;
        for (let seal = await sealJournal(db); seal; seal = seal.cut && ++seals < 10 ? await sealJournal(db) : undefined) {
          log.debug({ worker: "journal-sealer", seal: seal.id.toString(), transfers: seal.transferCount }, "sealed journal");
        }
      },
      log,
    ),
  ];
  return async () => {
    await Promise.all(loops.map((l) => l.stop()));
  };
}
