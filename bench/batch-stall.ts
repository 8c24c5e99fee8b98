/**
 * `npm run bench:batch-stall` (about a minute): does one tenant's large usage batch stall another
 * tenant's requests? The app runs in this process (one event loop, as in the service) on a fresh
 * database of the PostgreSQL at DATABASE_URL (default: the local server; durable commits). While
 * marketplace A posts a batch of 10,000 records, marketplace B reads `GET /v1/usage?limit=1` in a
 * loop; the benchmark prints B's slowest and 99th-percentile answers, the batch's time and its
 * answer's size, for each way of running the batch:
 *
 *   - the batch never gives way (yieldEvery ∞) or gives way every 250 records (the service's);
 *   - results compact (the default) or full;
 *   - records all invalid (empty objects: the hostile case) or all valid.
 *
 * Compare within one run (ratios against B's answers with no batch running). Written to
 * bench/results/batch-stall.json. See docs/performance.md.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { inProcessApp } from "./in-process.js";
import { batchTuning } from "../src/give-way.js";

const RECORDS = 10_000;
const root = join(import.meta.dirname, "..");
const log = (s: string) => process.stdout.write(`${s}\n`);

const { admin: ADMIN, call, ok, close } = await inProcessApp("stall");

// Two marketplaces; A has an operator and a prepaid customer with money.
await ok("POST", "/v1/assets", ADMIN, { code: "USDC", scale: 6, settlement: { kind: "offchain" } });
const keys: Record<string, string> = {};
for (const m of ["ma", "mb"]) {
  await ok("POST", "/v1/marketplaces", ADMIN, { id: m, name: m });
  await ok("POST", `/v1/marketplaces/${m}/fee-schedules`, ADMIN, { effective_from: "2020-01-01T00:00:00Z", rules: [{ party: "marketplace", bps: 1000 }] });
  keys[m] = (await ok("POST", "/v1/api-keys", ADMIN, { name: m, role: "marketplace", scope_id: m })).secret;
}
await ok("POST", "/v1/operators", keys.ma!, { id: "oa", name: "oa" });
await ok("POST", "/v1/customers", keys.ma!, { id: "ca", billing: "prepaid" });
await ok("POST", "/v1/customers/ca/deposits", keys.ma!, { asset: "USDC", amount: (10n ** 15n).toString() });
const hour = Date.now() - 2 * 3_600_000;
const valid = (tag: string, i: number) => ({
  external_id: `${tag}-${i}`,
  operator_id: "oa",
  customer_id: "ca",
  resource: "gpu:h100",
  unit: "gpu_hour",
  quantity: "1",
  unit_price: "2.5",
  asset: "USDC",
  period_start: new Date(hour - 3_600_000).toISOString(),
  period_end: new Date(hour).toISOString(),
});

/** B's answers (ms) while `during` runs, one after the other. */
async function probe(during: Promise<unknown> | null, ms = 0): Promise<number[]> {
  const out: number[] = [];
  let done = during === null;
  void during?.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  const until = Date.now() + ms;
  while (!done || (during === null && Date.now() < until)) {
    const t0 = performance.now();
    const r = await call("GET", "/v1/usage?limit=1", keys.mb!);
    if (r.status !== 200) throw new Error(`probe: ${r.status}`);
    out.push(performance.now() - t0);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return out;
}
const p = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? 0;
const round = (x: number) => Math.round(x * 10) / 10;

const idle = await probe(null, 2000);
log(`B alone: p99 ${round(p(idle, 0.99))} ms, max ${round(Math.max(...idle))} ms (${idle.length} answers)`);
const rows: Record<string, unknown>[] = [];
let tag = 0;
for (const records of ["invalid", "valid"] as const) {
  for (const results of ["compact", "full"] as const) {
    for (const yieldEvery of [Number.POSITIVE_INFINITY, 250]) {
      batchTuning.yieldEvery = yieldEvery;
      const t = `r${++tag}`;
      const body = { records: Array.from({ length: RECORDS }, (_, i) => (records === "invalid" ? {} : valid(t, i))), results };
      const t0 = performance.now();
      const batch = call("POST", "/v1/usage/batch", keys.ma!, body);
      const answers = await probe(batch);
      const r = await batch;
      const ms = performance.now() - t0;
      if (r.status !== 200) throw new Error(`batch: ${r.status} ${r.text.slice(0, 200)}`);
      const row = {
        records,
        results,
        yield_every: Number.isFinite(yieldEvery) ? yieldEvery : "never",
        batch_ms: Math.round(ms),
        answer_bytes: r.text.length,
        b_answers: answers.length,
        b_p99_ms: round(p(answers, 0.99)),
        b_max_ms: round(Math.max(...answers)),
        b_max_vs_alone: round(Math.max(...answers) / Math.max(...idle)),
      };
      rows.push(row);
      log(
        `${records.padEnd(7)} ${results.padEnd(7)} yield ${String(row.yield_every).padEnd(5)}  batch ${String(row.batch_ms).padStart(5)} ms, ` +
          `answer ${(row.answer_bytes / 1e6).toFixed(2).padStart(6)} MB;  B during it: p99 ${row.b_p99_ms} ms, max ${row.b_max_ms} ms (${row.b_answers} answers)`,
      );
    }
  }
}
batchTuning.yieldEvery = 250;
await close();
mkdirSync(join(root, "bench", "results"), { recursive: true });
const report = {
  run: { at: new Date().toISOString(), records: RECORDS, database: "postgres" },
  b_alone: { p99_ms: round(p(idle, 0.99)), max_ms: round(Math.max(...idle)) },
  scenarios: rows,
};
writeFileSync(join(root, "bench", "results", "batch-stall.json"), `${JSON.stringify(report, null, 2)}\n`);
log("written to bench/results/batch-stall.json");
