/**
 * The app in the benchmark's own process (one event loop, as in the service), on a fresh database
 * of the PostgreSQL at DATABASE_URL (durable commits; bench/database.ts), called without sockets.
 */
import { Settlements } from "../src/chain/settlement.js";
import { openDatabase } from "../src/db/client.js";
import { runMigrations } from "../src/db/migrate.js";
import { createApp } from "../src/http/app.js";
import { createMetrics } from "../src/http/metrics.js";
import { createLogger } from "../src/log.js";
import { closeLedgerContext, createLedgerContext } from "../src/services/context.js";
import { freshBenchDatabase } from "./database.js";

export async function inProcessApp(name: string) {
  const { url, settings } = await freshBenchDatabase(`ledger_bench_${name}`);
  const db = await openDatabase({ url, maxConnections: 10 });
  await runMigrations(db);
  const ledger = createLedgerContext(db);
  const admin = `${name}-admin-${"x".repeat(24)}`;
  const app = createApp({
    ledger,
    settlements: new Settlements([]),
    log: createLogger("silent"),
    metrics: createMetrics(db),
    config: { ADMIN_API_KEY: admin, MAX_BODY_BYTES: 1_048_576, MAX_BATCH_BODY_BYTES: 16_777_216 },
  });
  let seq = 0;
  /** A request with a key and a fresh Idempotency-Key: its status and body text. */
  const call = async (method: string, path: string, key: string, body?: unknown) => {
    const res = await app.request(path, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": `${name}-${++seq}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, text: await res.text() };
  };
  /** The same, expecting a 2xx: its body, parsed. */
  const ok = async (method: string, path: string, key: string, body?: unknown) => {
    const r = await call(method, path, key, body);
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text.slice(0, 300)}`);
    return JSON.parse(r.text);
  };
  const close = async () => {
    await closeLedgerContext(ledger);
    await db.close();
  };
  return { db, settings, admin, call, ok, close };
}
