/**
 * `npm run bench:cluster` (a few minutes): batch and single ingest and balance reads against the
 * service started as `npm start` does with several layouts of processes, one after the other in
 * one run, each on a fresh database with durable commits. A layout is `A` (A API processes on one
 * port) or `A+R` (A API processes, and R read processes on READ_PORT, which serve the balance
 * reads); each has one worker process beside it. `-- --layouts 1,2,1+1` (the default), `--seconds 8`.
 * Writes bench/results/cluster.json. See docs/performance.md.
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { generatePrivateKey } from "viem/accounts";
import { freePort } from "../scripts/anvil-chain.js";
import { freshBenchDatabase } from "./database.js";
import { client, handOverDeposits, percentile, pool, timed, usageRecords, type Client } from "./load.js";
import { probeFigures, startProbes } from "./probes.js";

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const layouts = arg("layouts", arg("api-processes", "1,2,1+1")).split(",");
const SECONDS = Number(arg("seconds", "8"));
const OPERATORS = 200;
const CUSTOMERS = 200;
const root = join(import.meta.dirname, "..");
const log = (s: string) => process.stdout.write(`${s}\n`);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- benchmark helpers answer whatever JSON the API sent
const must = async (p: Promise<{ status: number; body: any }>, what: string) => {
  const r = await p;
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};

async function waitReady(base: string) {
  for (
    let i = 0;
    !(await fetch(`${base}/readyz`).then(
      (r) => r.ok,
      () => false,
    ));
    i++
  ) {
    if (i > 1800) throw new Error(`the service at ${base} did not start`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function seed(api: Client): Promise<string> {
  await must(api.call("POST", "/v1/assets", { code: "TUSD", scale: 6, settlement: { kind: "offchain" } }), "asset");
  await must(api.call("POST", "/v1/marketplaces", { id: "bench", name: "bench" }), "marketplace");
  const rules = [
    { party: "marketplace", bps: 1000 },
    { party: "protocol", bps: 100 },
  ];
  await must(api.call("POST", "/v1/marketplaces/bench/fee-schedules", { effective_from: "2020-01-01T00:00:00Z", rules }), "fees");
  const market = (await must(api.call("POST", "/v1/api-keys", { name: "bench", role: "marketplace", scope_id: "bench" }), "key")).secret as string;
  const ids = (n: number) => Array.from({ length: n }, (_, i) => i);
  await pool(ids(OPERATORS), 16, async (i) => void (await must(api.call("POST", "/v1/operators", { id: `op-${i}`, name: `op ${i}` }, market), "operator")));
  await pool(ids(CUSTOMERS), 16, async (i) => {
    await must(api.call("POST", "/v1/customers", { id: `c-${i}`, billing: "prepaid" }, market), "customer");
    await must(api.call("POST", `/v1/customers/c-${i}/deposits`, { asset: "TUSD", amount: "1000000000000000" }, market), "deposit");
  });
  // As in npm run bench: its usage is then funded. Without it every balance read would walk the
  // marketplace's whole usage (docs/performance.md, "Reads planned once").
  await handOverDeposits(api, "bench", "TUSD", 1_000_000_000_000_000n * BigInt(CUSTOMERS));
  return market;
}

async function measure(layout: string) {
  const [apiCount, readCount = "0"] = layout.split("+");
  const { url } = await freshBenchDatabase("ledger_bench_cluster");
  const [port, readPort] = [await freePort(), await freePort()];
  const adminKey = `bench-admin-${generatePrivateKey().slice(2, 34)}`;
  const env = {
    ...process.env,
    DATABASE_URL: url,
    PORT: String(port),
    READ_PORT: String(readPort),
    API_PROCESSES: apiCount,
    READ_PROCESSES: readCount,
    WORKER_PROCESSES: "1",
    ADMIN_API_KEY: adminKey,
    LOG_LEVEL: "warn",
    JOURNAL_SEAL_INTERVAL_MS: "1000",
  };
  const server = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], { cwd: root, env, stdio: ["ignore", "ignore", "inherit"] });
  try {
    const base = `http://127.0.0.1:${port}`;
    const readBase = readCount === "0" ? base : `http://127.0.0.1:${readPort}`;
    await waitReady(base);
    await waitReady(readBase);
    const api = client(base, adminKey);
    const reader = client(readBase, adminKey);
    const market = await seed(api);
    const record = await usageRecords(base, OPERATORS, CUSTOMERS);
    log(`[${layout}] batch ingest: 4 clients × 1,000 records, ${SECONDS} s, 2 balance readers alongside …`);
    // The readers below share the load generator's event loop (which builds and parses the
    // batches); the probes time the same read from a process of their own (bench/probes.ts).
    const probes = await startProbes({ base: readBase, adminKey, dbUrl: url, operators: OPERATORS, intervalMs: 50 });
    const reads: number[] = [];
    let reading = true;
    const readers = Promise.all(
      [0, 1].map(async () => {
        while (reading) {
          const t = performance.now();
          const r = await reader.call("GET", `/v1/operators/op-${Math.floor(Math.random() * OPERATORS)}/balances`);
          if (r.status !== 200) throw new Error(`balance read: ${r.status}`);
          reads.push(performance.now() - t);
          await new Promise((res) => setTimeout(res, 20));
        }
      }),
    );
    const batch = await timed(4, SECONDS * 1000, async () => {
      const r = await api.call("POST", "/v1/usage/batch", { records: Array.from({ length: 1000 }, record) }, market);
      if (r.status !== 200) throw new Error(`batch: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
      return r.body.summary.accepted as number;
    });
    reading = false;
    await readers;
    const p = probeFigures(await probes.stop(), "probe");
    const floor = {
      probe_balance_p50_ms: p.probe_balance_p50_ms!,
      probe_balance_p99_ms: p.probe_balance_p99_ms!,
      probe_healthz_p99_ms: p.probe_healthz_p99_ms!,
      probe_select1_p99_ms: p.probe_select1_p99_ms!,
    };
    log(`[${layout}] single ingest: 64 connections, ${SECONDS} s …`);
    const single = await timed(64, SECONDS * 1000, async () => {
      const r = await api.call("POST", "/v1/usage", record(), market);
      if (r.status !== 201) throw new Error(`single: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
      return 1;
    });
    return {
      layout,
      api_processes: Number(apiCount),
      read_processes: Number(readCount),
      worker_processes: 1,
      ingest_batch_records_per_s: Math.round(batch.units / batch.seconds),
      ingest_batch_p99_ms: Math.round(percentile(batch.latencies, 99)),
      ingest_single_records_per_s: Math.round(single.units / single.seconds),
      ingest_single_p99_ms: +percentile(single.latencies, 99).toFixed(1),
      balance_reads: reads.length,
      balance_read_p50_ms: +percentile(reads, 50).toFixed(1),
      balance_read_p99_ms: +percentile(reads, 99).toFixed(1),
      ...floor,
    };
  } finally {
    server.kill("SIGTERM");
    await new Promise((r) => server.once("exit", r));
  }
}

const results = [];
for (const layout of layouts) results.push(await measure(layout));
const first = results[0]!;
const ratio = (a: number, b: number) => +(a / b).toFixed(2);
const report = {
  run: { at: new Date().toISOString(), seconds_per_scenario: SECONDS, operators: OPERATORS, customers: CUSTOMERS, cpus: cpus().length },
  layouts: results.map((r) => ({
    ...r,
    batch_vs_first: ratio(r.ingest_batch_records_per_s, first.ingest_batch_records_per_s),
    single_vs_first: ratio(r.ingest_single_records_per_s, first.ingest_single_records_per_s),
    read_p99_vs_first: ratio(r.balance_read_p99_ms, first.balance_read_p99_ms),
  })),
};
mkdirSync(join(root, "bench", "results"), { recursive: true });
writeFileSync(join(root, "bench", "results", "cluster.json"), `${JSON.stringify(report, null, 2)}\n`);
log("");
log("layout   batch/s  single/s  read p50  read p99  probe read p50/p99  healthz p99  select 1 p99  batch×  single×");
for (const r of report.layouts)
  log(
    `${r.layout.padEnd(6)} ${String(r.ingest_batch_records_per_s).padStart(9)} ${String(r.ingest_single_records_per_s).padStart(9)} ${String(r.balance_read_p50_ms).padStart(9)} ${String(r.balance_read_p99_ms).padStart(9)} ${`${r.probe_balance_p50_ms} / ${r.probe_balance_p99_ms}`.padStart(19)} ${String(r.probe_healthz_p99_ms).padStart(12)} ${String(r.probe_select1_p99_ms).padStart(13)} ${String(r.batch_vs_first).padStart(7)} ${String(r.single_vs_first).padStart(8)}`,
  );
log("\nwritten to bench/results/cluster.json");
process.exit(0);
