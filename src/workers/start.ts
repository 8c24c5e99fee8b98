import type { Settlements } from "../chain/settlement.js";
import type { Config } from "../config.js";
import type { Database } from "../db/client.js";
import type { Logger } from "../log.js";
import { expireUsageHolds } from "../services/holds.js";
import { expireHolds } from "./hold-expirer.js";
import { sealJournal } from "../db/journal-seals.js";
import { relayEvents } from "../db/event-relay.js";
import { foldOperatorEarned } from "../db/queries/operator-views.js";
import { moveFundingMarks, type WritingTops } from "../services/funding-marks.js";
import { startLoop } from "./loop.js";
import type { FaultPoint } from "../domain/payouts.js";
import { PayoutWorker } from "./payout-worker.js";
import { resolveWebhookKey } from "../webhook-key.js";
import { WebhookWorker } from "./webhooks/worker.js";

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
  const webhooks = webhookWorker(db, config, log);
  const loops = [
    startLoop("payouts", config.PAYOUT_INTERVAL_MS, () => payouts.tick(), log),
    startLoop("webhooks", config.WEBHOOK_INTERVAL_MS, () => webhooks.tick(), log),
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
    ...ledgerLoops(db, config, log),
  ];
  return async () => {
    await Promise.all(loops.map((l) => l.stop()));
  };
}

/** The loops that keep derived ledger data behind the writers: the journal's seals, the events, the operators' earnings folded, the funding marks. */
function ledgerLoops(db: Database, config: Config, log: Logger) {
  // Per marketplace and asset, how many mark steps in a row found it writing usage.
  const fundingMarkTops: WritingTops = new Map();
  return [
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
    startLoop(
      "earnings-folder",
      config.JOURNAL_SEAL_INTERVAL_MS,
      async () => {
        // The parts of operators' earnings added since the last tick, folded into one per key.
        const removed = await foldOperatorEarned(db);
        if (removed > 0) log.debug({ worker: "earnings-folder", removed }, "folded operator earnings");
      },
      log,
    ),
    startLoop(
      "funding-marker",
      config.JOURNAL_SEAL_INTERVAL_MS,
      async () => {
        // Marketplaces short of money: their funding judgments walk only the usage after the mark.
        const moved = await moveFundingMarks(db, db.clock.now(), fundingMarkTops);
        if (moved > 0) log.debug({ worker: "funding-marker", moved }, "moved funding marks");
      },
      log,
    ),
    startLoop(
      "event-relay",
      config.EVENT_RELAY_INTERVAL_MS,
      async () => {
        // A backlog is relayed in bounded steps, a few per tick (so that stopping never waits long).
        let steps = 0;
        for (let step = await relayEvents(db); step; step = step.cut && ++steps < 10 ? await relayEvents(db) : undefined) {
          if (step.appended > 0) log.debug({ worker: "event-relay", appended: step.appended, position: step.lastPosition.toString() }, "relayed events");
        }
      },
      log,
    ),
  ];
}

/** The webhook worker of the configuration (docs/api.md, "Webhooks"). */
function webhookWorker(db: Database, config: Config, log: Logger): WebhookWorker {
  if (config.WEBHOOK_LEASE_MS !== undefined && config.WEBHOOK_LEASE_MS <= config.WEBHOOK_TIMEOUT_MS)
    throw new Error("Invalid configuration: WEBHOOK_LEASE_MS must be more than WEBHOOK_TIMEOUT_MS");
  return new WebhookWorker(db, {
    log,
    secretsKey: resolveWebhookKey(config),
    allowPrivate: config.WEBHOOKS_ALLOW_PRIVATE === "true",
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    concurrency: config.WEBHOOK_CONCURRENCY,
    leaseMs: config.WEBHOOK_LEASE_MS,
  });
}
