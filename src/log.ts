import { pino } from "pino";

/** JSON lines on stdout. Secrets never reach a log call; the redact list is a second line of defence. */
export function createLogger(level: string) {
  return pino({
    level,
    base: { service: "settlement-ledger" },
    // ISO 8601 times (UTC) rather than epoch milliseconds: readable by people and log tools alike.
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: ["authorization", "*.authorization", "req.headers.authorization", "apiKey", "*.apiKey", "privateKey", "*.privateKey"],
  });
}
export type Logger = ReturnType<typeof createLogger>;
