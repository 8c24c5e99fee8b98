/**
 * `npm run bench:profile -- batch|single [seconds]`: where the time goes under one load. Starts a
 * private PostgreSQL server with pg_stat_statements (chaos/cluster.ts) and the service with
 * Node's --cpu-prof, seeds a marketplace with 100 operators and 100 prepaid customers, drives
 * batch ingest (4 clients × 1,000 records) or single ingest (64 clients) for the given seconds
 * (default 15), or `read`: 20 batches first, then 4 clients reading random operators' balances
 * (`GET /v1/operators/{id}/balances`) with nothing else running; then prints the throughput, the
 * CPU and the bytes the service wrote and read per record, the statements by total execution time (time waiting
 * for row locks included), and the service's functions and packages by self time. The .cpuprofile
 * is kept in bench/results/profiles/ (open it in Chrome DevTools or speedscope).
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { Cluster } from "../chaos/cluster.js";
import { apiProcess, must, newStats, root, seedMarket, usageRecord } from "../chaos/harness.js";
import { freePort } from "../scripts/anvil-chain.js";
import { client } from "./load.js";

// Output piped into a reader that stops early (`| head`): the rest is dropped, and the service and
// the private PostgreSQL are still stopped (an EPIPE thrown here left them running, loading the
// machine under every run after it).
process.stdout.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code !== "EPIPE") throw err;
});
const mode = ["single", "read", "healthz", "asset"].includes(process.argv[2] ?? "") ? process.argv[2]! : "batch";
/** `--socket`: the service reaches PostgreSQL over its Unix socket instead of TCP on 127.0.0.1. */
const overSocket = process.argv.includes("--socket");
const seconds = Number(process.argv[3]?.startsWith("--") ? 15 : (process.argv[3] ?? 15));
const KEY = `profile-admin-${Date.now()}-0123456789abcdef`;
const profiles = join(root, "bench", "results", "profiles");
rmSync(profiles, { recursive: true, force: true });
mkdirSync(profiles, { recursive: true });

const cluster = await Cluster.create(await freePort(), [
  "shared_preload_libraries=pg_stat_statements",
  "pg_stat_statements.track=all",
  "pg_stat_statements.track_planning=on",
]);
try {
  const dbUrl = await cluster.createDatabase("ledger_profile");
  const sql = postgres(dbUrl, { max: 1, onnotice: () => {} });
  await sql`create extension pg_stat_statements`;
  // Over the socket: an empty host in the URL, and the socket's folder and port as PGHOST and PGPORT.
  const database = overSocket
    ? { DATABASE_URL: `postgres:///${new URL(dbUrl).pathname.slice(1)}`, PGHOST: cluster.dir, PGPORT: String(cluster.port), PGUSER: "postgres" }
    : { DATABASE_URL: dbUrl };
  const api = apiProcess("api", await freePort(), { ...database, ADMIN_API_KEY: KEY });
  api.nodeArgs = ["--cpu-prof", `--cpu-prof-dir=${profiles}`];
  await api.start();
  const stats = newStats();
  await must(stats, [api.base], "POST", "/v1/assets", KEY, { code: "USDC", scale: 6, settlement: { kind: "offchain" } });
  const m = await seedMarket(stats, [api.base], KEY, { asset: "USDC", operators: 100, customers: 100, deposit: "1000000000000000" });
  let records = 0;
  let seq = 0;
  const http = client(api.base, m.key);
  const post = (path: string, body: unknown) => http.call("POST", path, body);
  // Reads need history to read: earnings, entries, parts of operator_earned.
  if (mode === "read")
    for (let b = 0; b < 20; b++) await post("/v1/usage/batch", { records: Array.from({ length: 1000 }, (_, i) => usageRecord(m, "USDC", `h${b}-${i}`)) });
  const latencies: number[] = [];
  await sql`select pg_stat_statements_reset()`;

  const procTimes = (pid: number) => {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return { user: Number(f[11]) / 100, system: Number(f[12]) / 100 };
  };
  const procCpu = (pid: number) => {
    const t = procTimes(pid);
    return t.user + t.system;
  };
  /** Bytes the service passed to write() and read() (its sockets: PostgreSQL's and HTTP's), from /proc/<pid>/io. */
  const procIo = (pid: number) => {
    const f = Object.fromEntries(
      readFileSync(`/proc/${pid}/io`, "utf8")
        .trim()
        .split("\n")
        .map((l) => l.split(": ") as [string, string]),
    );
    return { wrote: Number(f.wchar), read: Number(f.rchar) };
  };
  const system0 = procTimes(api.child!.pid!).system;
  const io0 = procIo(api.child!.pid!);
  const cpu0 = { client: process.cpuUsage(), service: procCpu(api.child!.pid!), postgres: cluster.cpuSeconds() };
  const t0 = performance.now();
  const until = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: mode === "single" || mode === "healthz" || mode === "asset" ? 64 : 4 }, async () => {
      while (performance.now() < until) {
        const n = ++seq;
        if (mode === "read") {
          const start = performance.now();
          const r = await http.call("GET", `/v1/operators/${m.operators[n % m.operators.length]}/balances`, undefined, KEY);
          latencies.push(performance.now() - start);
          if (r.status === 200) records++;
        } else if (mode === "healthz" || mode === "asset") {
          const r = await http.call("GET", mode === "healthz" ? "/healthz" : "/v1/assets/USDC");
          if (r.status === 200) records++;
        } else if (mode === "batch") {
          const r = await post("/v1/usage/batch", { records: Array.from({ length: 1000 }, (_, i) => usageRecord(m, "USDC", `b${n}-${i}`)) });
          records += r.body.summary?.accepted ?? 0;
        } else {
          const r = await post("/v1/usage", usageRecord(m, "USDC", `s${n}`));
          if (r.status === 201) records++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  const clientCpu = process.cpuUsage(cpu0.client);
  const used = {
    service: procCpu(api.child!.pid!) - cpu0.service,
    postgres: cluster.cpuSeconds() - cpu0.postgres,
    client: (clientCpu.user + clientCpu.system) / 1e6,
  };
  const serviceSystem = procTimes(api.child!.pid!).system - system0;
  const io1 = procIo(api.child!.pid!);
  const over = `(PostgreSQL over ${overSocket ? "its Unix socket" : "TCP"})`;
  if (mode === "read") {
    latencies.sort((a, b) => a - b);
    const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!.toFixed(2);
    console.log(`balance reads: ${Math.round(records / elapsed)} reads/s over ${elapsed.toFixed(1)} s, p50 ${at(0.5)} ms, p99 ${at(0.99)} ms ${over}`);
  } else console.log(`${mode} ingest: ${Math.round(records / elapsed)} records/s over ${elapsed.toFixed(1)} s ${over}`);
  const perRecord = (s: number) => `${((s / Math.max(records, 1)) * 1e6).toFixed(0)} µs/${mode === "read" ? "read" : "record"}`;
  console.log(
    `CPU used: service ${used.service.toFixed(1)} s (${perRecord(used.service)}; ${Math.round((serviceSystem / Math.max(used.service, 0.01)) * 100)}% in the kernel), PostgreSQL ${used.postgres.toFixed(1)} s (${perRecord(used.postgres)}), load client ${used.client.toFixed(1)} s (${perRecord(used.client)}); ` +
      `${((used.service + used.postgres + used.client) / elapsed).toFixed(2)} of ${cpus().length} cores busy`,
  );
  const perUnit = (bytes: number) => `${Math.round(bytes / Math.max(records, 1)).toLocaleString("en")} bytes/${mode === "read" ? "read" : "record"}`;
  console.log(`the service wrote ${perUnit(io1.wrote - io0.wrote)} and read ${perUnit(io1.read - io0.read)} (its sockets: PostgreSQL and HTTP)\n`);

  const rows = await sql<{ ms: number; plan: number; calls: number; mean: string; q: string }[]>`
    select round(total_exec_time)::int as ms, round(total_plan_time)::int as plan, calls::int, round(mean_exec_time::numeric, 2)::text as mean,
           left(regexp_replace(query, '\\s+', ' ', 'g'), 110) as q
      from pg_stat_statements where query not like '%pg_stat_statements%' order by ${process.argv.includes("--by-calls") ? sql`calls` : sql`total_exec_time`} desc limit ${process.argv.includes("--by-calls") ? 40 : mode === "read" ? 20 : 12}`;
  const [planned] = await sql<{ exec: number; plan: number }[]>`
    select round(sum(total_exec_time))::int as exec, round(sum(total_plan_time))::int as plan
      from pg_stat_statements where query not like '%pg_stat_statements%'`;
  console.log(`PostgreSQL statements: ${planned!.exec} ms executing, ${planned!.plan} ms planning (every statement is planned at each run: custom plans)`);
  console.log("by total execution time (lock waits included):");
  console.log(`${"total ms".padStart(9)} ${"plan ms".padStart(8)} ${"calls".padStart(7)} ${"mean ms".padStart(9)}  statement`);
  for (const r of rows) console.log(`${String(r.ms).padStart(9)} ${String(r.plan).padStart(8)} ${String(r.calls).padStart(7)} ${r.mean.padStart(9)}  ${r.q}`);
  await sql.end();
  await api.stop();

  // The main thread's profile is the largest file.
  const file = readdirSync(profiles)
    .map((f) => join(profiles, f))
    .sort((a, b) => readFileSync(b).length - readFileSync(a).length)[0]!;
  const profile = JSON.parse(readFileSync(file, "utf8")) as {
    nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
    samples: number[];
    timeDeltas: number[];
  };
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const fn = new Map<string, number>();
  const pkg = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    total += dt;
    const cf = byId.get(id)!;
    const where = cf.url.includes("node_modules/") ? cf.url.split("node_modules/").pop()! : cf.url.replace(`file://${root}/`, "");
    const name = `${cf.functionName || "(anonymous)"} ${where}${where ? `:${cf.lineNumber + 1}` : ""}`;
    fn.set(name, (fn.get(name) ?? 0) + dt);
    const group = cf.url.includes("node_modules/")
      ? where
          .split("/")
          .slice(0, where.startsWith("@") ? 2 : 1)
          .join("/")
      : where || cf.functionName;
    pkg.set(group, (pkg.get(group) ?? 0) + dt);
  });
  const top = (m: Map<string, number>, n: number) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `${((v / total) * 100).toFixed(1).padStart(5)}%  ${k}`)
      .join("\n");
  console.log(`\nthe service's CPU profile (${(total / 1e6).toFixed(1)} s sampled; ${file.replace(`${root}/`, "")}), functions by self time:`);
  console.log(top(fn, 15));
  console.log("\nby file or package:");
  console.log(top(pkg, 12));
} finally {
  await cluster.destroy();
}
process.exit(0);
