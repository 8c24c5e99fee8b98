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
    config: { ADMIN_API_KEY: admin, MAX_BODY_BYTES: 1_048_576, MAX_BATCH_BODY_BYTES: 16_777_216, BODY_READ_TIMEOUT_MS: 60_000 },
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

/**
 * Usage records in USDC of operators op-0… and customers c-0… (random), each up to an hour of GPU
 * time ended two hours ago: `record()` makes one, `made` counts them, `postUpTo(size)` posts batches
 * of up to 1,000 with the marketplace's key until `size` were made.
 */
export function gpuUsage(
  operators: number,
  customers: number,
  post: (method: string, path: string, key: string, body?: unknown) => Promise<unknown>,
  marketKey: () => string,
) {
  const hour = Date.now() - 2 * 3_600_000;
  const u = {
    made: 0,
    record: () => ({
      external_id: `u-${++u.made}`,
      operator_id: `op-${Math.floor(Math.random() * operators)}`,
      customer_id: `c-${Math.floor(Math.random() * customers)}`,
      resource: "gpu:h100",
      unit: "gpu_second",
      quantity: String(60 + Math.floor(Math.random() * 3540)),
      unit_price: "0.000694",
      asset: "USDC",
      period_start: new Date(hour - 3_600_000).toISOString(),
      period_end: new Date(hour).toISOString(),
    }),
    postUpTo: async (size: number) => {
      while (u.made < size) await post("POST", "/v1/usage/batch", marketKey(), { records: Array.from({ length: Math.min(1000, size - u.made) }, u.record) });
    },
  };
  return u;
}

/**
 * Finance settles a marketplace's USDC usage but its last `tail` records (a receipt of what is new,
 * approved by a second key): `settle()` each time more usage was posted.
 */
export function tailSettler(
  db: { query<T>(sql: string, params?: unknown[]): Promise<T[]> },
  post: (method: string, path: string, key: string, body?: unknown) => Promise<{ id: string }>,
  keys: { finance: string; controller: string },
  tail: number,
) {
  let settled = 0n;
  let receipts = 0;
  return async (): Promise<void> => {
    const [{ due }] = (await db.query<{ due: string }>(
      "select coalesce(sum(gross), 0)::text as due from (select gross from usage_records where marketplace_id = 'm' order by funding_seq desc offset $1) x",
      [tail],
    )) as [{ due: string }];
    if (BigInt(due) <= settled) return;
    const receipt = await post("POST", "/v1/marketplaces/m/receipts", keys.finance, {
      asset: "USDC",
      amount: (BigInt(due) - settled).toString(),
      reference: `settlement ${++receipts}`,
    });
    await post("POST", `/v1/proposals/${receipt.id}/approve`, keys.controller, {});
    settled = BigInt(due);
  };
}
