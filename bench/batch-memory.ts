/**
 * `npx tsx bench/batch-memory.ts [clients]`: the service with `npm start`'s heap cap against
 * usage batches at the largest body it accepts (MAX_BATCH_BODY_BYTES, 16 MiB: 10,000 records with
 * ~1.5 KB of metadata each), `clients` of them at once (default 3). Prints each answer's status
 * and time and the service's peak resident memory; extra settings for the service come from the
 * environment (e.g. BATCH_BODIES_IN_FLIGHT_BYTES). See docs/performance.md, "Memory".
 */
import { readFileSync } from "node:fs";
import { apiProcess, must, newStats, seedMarket, usageRecord } from "../chaos/harness.js";
import { freePort } from "../scripts/anvil-chain.js";
import { freshBenchDatabase } from "./database.js";
import { client } from "./load.js";
import { startScriptNodeFlags } from "./service-flags.js";

const clients = Number(process.argv[2] ?? 3);
const KEY = `memory-admin-${Date.now()}-0123456789abcdef`;
const { url } = await freshBenchDatabase("ledger_batch_memory");
const api = apiProcess("api", await freePort(), { DATABASE_URL: url, ADMIN_API_KEY: KEY, RUN_WORKERS: "false" });
api.nodeArgs = startScriptNodeFlags(process.cwd());
await api.start();
try {
  const stats = newStats();
  await must(stats, [api.base], "POST", "/v1/assets", KEY, { code: "USDC", scale: 6, settlement: { kind: "offchain" } });
  const m = await seedMarket(stats, [api.base], KEY, { asset: "USDC", operators: 50, customers: 50, deposit: "1000000000000000" });
  const metadata = Object.fromEntries(Array.from({ length: 36 }, (_, k) => [`tag_${k}`, `value-${k}-${"x".repeat(16)}`]));
  const body = (n: number) => ({ records: Array.from({ length: 10_000 }, (_, i) => ({ ...usageRecord(m, "USDC", `m${n}-${i}`), metadata })) });
  console.log(`${clients} batches of ${(Buffer.byteLength(JSON.stringify(body(0))) / 1_048_576).toFixed(1)} MiB at once, heap flags ${api.nodeArgs.join(" ")}`);
  const http = client(api.base, m.key);
  await Promise.all(
    Array.from({ length: clients }, async (_, n) => {
      const t = performance.now();
      const r = await http.call("POST", "/v1/usage/batch", body(n + 1)).catch((e: Error) => ({ status: 0, body: { error: e.message } }));
      console.log(`batch ${n + 1}: ${r.status} ${JSON.stringify(r.body.summary ?? r.body).slice(0, 120)} in ${Math.round(performance.now() - t)} ms`);
    }),
  );
  // A process that has just died may not be reaped yet: its /proc entry then has no memory lines.
  const hwm = api.alive ? /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${api.child!.pid}/status`, "utf8")) : null;
  console.log(
    hwm
      ? `service alive; peak RSS ${Math.round(Number(hwm[1]) / 1024)} MB`
      : "the service died (out of heap): raise the cap (HEAP_MB) or lower BATCH_BODIES_IN_FLIGHT_BYTES / MAX_BATCH_BODY_BYTES",
  );
} finally {
  await api.stop();
}
process.exit(0);
