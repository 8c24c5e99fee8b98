/**
 * The floor under a read's latency during ingest. While the batch scenario runs, a process of its
 * own (not the load generator's event loop, which builds and parses 1,000-record batches) measures,
 * every 50 ms each:
 *   - `balance`: the benchmark's balance read, `GET /v1/operators/{id}/balances`;
 *   - `healthz`: `GET /healthz` on the same service: no key check, no database, so only the
 *     service's event loop and the machine's cores between the request and its answer;
 *   - `select1`: `select 1` on a connection of its own straight to PostgreSQL: no service at all,
 *     only a backend being scheduled on the machine's cores.
 * A read cannot answer faster than `healthz` (its event loop) plus its statements, each at least a
 * `select1` (docs/performance.md, "The floor under a read").
 */
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { client, percentile } from "./load.js";

export interface ProbeSettings {
  base: string;
  adminKey: string;
  dbUrl: string;
  operators: number;
  intervalMs: number;
}

export type ProbeLatencies = Record<"balance" | "healthz" | "select1", number[]>;

/** Starts the probes in a process of their own; `stop()` ends them and answers their latencies (ms). */
export async function startProbes(settings: ProbeSettings): Promise<{ stop(): Promise<ProbeLatencies> }> {
  const child = fork(fileURLToPath(import.meta.url), [JSON.stringify(settings)], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const message = <T>() =>
    new Promise<T>((resolve, reject) => {
      child.once("message", (m: T) => resolve(m));
      child.once("error", reject);
      child.once("exit", (code) => reject(new Error(`the probe process exited (${code}) before answering`)));
    });
  await message<"ready">();
  return {
    async stop() {
      const result = message<ProbeLatencies>();
      child.send("stop");
      return result;
    },
  };
}

/** The probes' percentiles under the keys bench/results/latest.json keeps. */
export function probeFigures(p: ProbeLatencies, prefix: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, values] of Object.entries(p)) {
    out[`${prefix}_${name}_p50_ms`] = +percentile(values, 50).toFixed(1);
    out[`${prefix}_${name}_p99_ms`] = +percentile(values, 99).toFixed(1);
  }
  return out;
}

async function runProbes(s: ProbeSettings): Promise<void> {
  const api = client(s.base, s.adminKey);
  const sql = postgres(s.dbUrl, { max: 1, onnotice: () => {} });
  await sql`select 1`; // connected before the first measurement
  await api.call("GET", "/healthz");
  let running = true;
  process.once("message", () => (running = false));
  process.send!("ready");
  const out: ProbeLatencies = { balance: [], healthz: [], select1: [] };
  const loop = async (values: number[], op: () => Promise<void>) => {
    while (running) {
      const t = performance.now();
      await op();
      values.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, s.intervalMs));
    }
  };
  const ok = async (path: string) => {
    const r = await api.call("GET", path);
    if (r.status !== 200) throw new Error(`probe ${path}: ${r.status}`);
  };
  await Promise.all([
    loop(out.balance, () => ok(`/v1/operators/op-${Math.floor(Math.random() * s.operators)}/balances`)),
    loop(out.healthz, () => ok("/healthz")),
    loop(out.select1, async () => void (await sql`select 1`)),
  ]);
  await sql.end();
  process.send!(out, () => process.exit(0));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await runProbes(JSON.parse(process.argv[2]!) as ProbeSettings);
