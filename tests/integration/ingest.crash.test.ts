import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { usageMonth } from "../support/clock.js";
import { freePort } from "../../scripts/anvil-chain.js";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { freshDatabase, NEEDS_PG, onRealPostgres, type TestDatabase } from "../support/db.js";
import { serviceProcessArgs } from "../support/service-build.js";

const root = join(import.meta.dirname, "..", "..");
const KEY = "crash-admin-key-0123456789abcdef";
let interrupted = 0;
let db: TestDatabase | undefined;
let server: ChildProcess | undefined;
afterEach(async () => {
  server?.kill("SIGKILL");
  await db?.destroy();
  db = undefined;
});

function startServer(port: number): ChildProcess {
  return spawn(process.execPath, serviceProcessArgs("src/main.ts"), {
    cwd: root,
    stdio: ["ignore", "ignore", "ignore"],
    env: { ...process.env, ...db!.env, PORT: String(port), ADMIN_API_KEY: KEY, LOG_LEVEL: "silent", RATE_LIMIT_PER_SECOND: "0" },
  });
}

async function ready(base: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (
      await fetch(`${base}/readyz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the service did not start");
}

/** Sends until a definitive answer (anything but a network error or 503), always with the same key and body. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test and benchmark helpers answer whatever JSON the API sent
async function send(base: string, path: string, key: string, body: unknown, idempotencyKey: string): Promise<{ status: number; body: any }> {
  for (let attempt = 0; ; attempt++) {
    try {
      const res = await fetch(`${base}${path}`, {
        method: "POST",
        body: JSON.stringify(body),
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": idempotencyKey },
      });
      if (res.status !== 503) return { status: res.status, body: await res.json() };
    } catch {
      // the server is down: retry
      interrupted++;
    }
    if (attempt > 600) throw new Error(`no answer for ${idempotencyKey}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(!onRealPostgres)(`the API process killed (SIGKILL) during batch and single ingest ${NEEDS_PG}`, () => {
  it("every acknowledged record is in the ledger once, nothing half-written, and retries converge to exactly one copy of each", async () => {
    db = await freshDatabase();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    server = startServer(port);
    await ready(base);
    const call = (path: string, body: unknown, key = KEY) => send(base, path, key, body, `${path}-${JSON.stringify(body).length}-${Math.random()}`);
    await call("/v1/assets", { code: "USDC", scale: 6, settlement: { kind: "offchain" } });
    await call("/v1/marketplaces", { id: "m", name: "m" });
    await call("/v1/marketplaces/m/fee-schedules", { effective_from: "2020-01-01T00:00:00Z", rules: [{ party: "marketplace", bps: 1000 }] });
    const mk = (await call("/v1/api-keys", { name: "m", role: "marketplace", scope_id: "m" })).body.secret as string;
    for (let i = 0; i < 10; i++) {
      await call("/v1/operators", { id: `op-${i}`, name: "o" }, mk);
      await call("/v1/customers", { id: `c-${i}`, billing: "postpaid", credit_limits: [{ asset: "USDC", credit_limit: "1000000000000000000000000" }] }, mk);
    }
    const record = (id: string) => ({
      external_id: id,
      operator_id: `op-${id.length % 10}`,
      customer_id: `c-${id.charCodeAt(id.length - 1) % 10}`,
      resource: "gpu:h100",
      unit: "gpu_second",
      quantity: "600",
      unit_price: "0.000694",
      asset: "USDC",
      period_start: usageMonth.day(10).toISOString(),
      period_end: usageMonth.day(11).toISOString(),
    });
    const acknowledged = new Set<string>();
    const batches = Array.from({ length: 30 }, (_, b) => Array.from({ length: 100 }, (_, i) => `b${b}-r${i}`));
    const singles = Array.from({ length: 300 }, (_, i) => `s${i}`);

    // The load: batches and single records, each request retried with its own key until answered.
    const load = Promise.all([
      (async () => {
        for (const [b, ids] of batches.entries()) {
          const r = await send(base, "/v1/usage/batch", mk, { records: ids.map(record) }, `batch-${b}`);
          expect(r.status).toBe(200);
          for (const item of r.body.results) if (item.status === "accepted" || item.status === "duplicate") acknowledged.add(item.external_id);
        }
      })(),
      ...Array.from({ length: 8 }, async (_, w) => {
        for (let i = w; i < singles.length; i += 8) {
          const r = await send(base, "/v1/usage", mk, record(singles[i]!), `single-${i}`);
          expect([200, 201]).toContain(r.status);
          acknowledged.add(r.body.external_id);
        }
      }),
    ]);
    // Kill it twice while the load runs, and bring it back each time.
    let kills = 0;
    const chaos = (async () => {
      for (const wait of [700, 900]) {
        await new Promise((r) => setTimeout(r, wait));
        server!.kill("SIGKILL");
        await new Promise((r) => server!.once("exit", r));
        kills++;
        await new Promise((r) => setTimeout(r, 300));
        server = startServer(port);
        await ready(base);
      }
    })();
    await Promise.all([load, chaos]);
    expect(kills).toBe(2);
    expect(interrupted, "requests cut by the kills").toBeGreaterThan(0);

    const all = [...batches.flat(), ...singles];
    expect(acknowledged.size).toBe(all.length);
    const rows = await db.query<{ external_id: string; n: string }>("select external_id, count(*)::text as n from usage_records group by external_id");
    expect(rows).toHaveLength(all.length);
    expect(rows.every((r) => r.n === "1")).toBe(true);
    const [{ transfers }] = (await db.query<{ transfers: string }>("select count(*)::text as transfers from transfers where metadata ? 'usage'")) as [
      { transfers: string },
    ];
    expect(Number(transfers)).toBe(all.length);
    const report = await verifyLedger(db);
    expect(report.ok, JSON.stringify(report.violations)).toBe(true);
  }, 180_000);
});
