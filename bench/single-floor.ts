/**
 * `npm run bench:single-floor [-- seconds]`: the most single-record ingest over HTTP this machine
 * allows, next to the naive writer in the same run, so that `ingest_single_records_per_s` can be
 * read against what no service could exceed here.
 *
 * The floor server (this file run as `serve`, a process of its own as the service is) does the
 * least a durable HTTP ingest can do: node:http, the body parsed as JSON, the records of the
 * requests that arrived meanwhile group-committed in one transaction with the raw yardstick's rows
 * (a transfer, four entries and a usage record each, into copies of the service's tables with
 * their indexes; bench/baselines.ts), two transactions in flight at most as the service's
 * committer, then `201` with a small JSON body. No key check, no idempotency, no validation, no
 * rating, no balances, no audit row. It is driven as `npm run bench` drives the service: 64
 * keep-alive connections from this process, one record per `POST`.
 *
 * Prints the figures and writes bench/results/single-floor.json.
 */
import { fork } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { openDatabase } from "../src/db/client.js";
import { runMigrations } from "../src/db/migrate.js";
import { naive, pushEntries } from "./baselines.js";
import { freshBenchDatabase } from "./database.js";
import { client, percentile, timed } from "./load.js";

const ACCOUNTS = 2002;
const IN_FLIGHT = 2;

if (process.argv[2] === "serve") await serve(process.argv[3]!);
else await main();

async function serve(url: string) {
  const sql = postgres(url, { max: IN_FLIGHT, onnotice: () => {} });
  const accounts = Array.from({ length: ACCOUNTS }, () => randomUUID());
  const asset = randomUUID();
  type Waiting = { record: { external_id: string; operator_id: string; customer_id: string }; done: (error?: Error) => void };
  let queue: Waiting[] = [];
  let inFlight = 0;
  const commit = async (group: Waiting[]) => {
    const ids: string[] = [],
      keys: string[] = [],
      meta: string[] = [],
      eT: string[] = [],
      eLeg: number[] = [],
      eAcct: string[] = [],
      eSide: string[] = [],
      eAmt: string[] = [],
      uExt: string[] = [],
      uOp: string[] = [],
      uCust: string[] = [];
    for (const { record } of group) {
      const id = randomUUID();
      ids.push(id);
      keys.push(`usage:m:${record.external_id}`);
      meta.push(JSON.stringify({ usage: { external_id: record.external_id } }));
      const c = Math.floor(Math.random() * (ACCOUNTS - 2));
      pushEntries({ eT, eLeg, eAcct, eSide, eAmt }, id, [accounts[c]!, accounts[(c + 1) % (ACCOUNTS - 2)]!, accounts[ACCOUNTS - 2]!, accounts[ACCOUNTS - 1]!]);
      uExt.push(record.external_id);
      uOp.push(record.operator_id);
      uCust.push(record.customer_id);
    }
    await sql.begin((tx) => [
      tx`insert into floor.transfers (id, idempotency_key, request_hash, kind, effective_at, metadata)
         select id, k, '0', 'standard', now(), m::jsonb from unnest(${ids}::uuid[], ${keys}::text[], ${meta}::text[]) as u(id, k, m)`,
      tx`insert into floor.entries (transfer_id, leg, account_id, asset_id, side, posted_amount, pending_amount, balance_after, effective_at)
         select t, l, a, ${asset}, s, amt, 0, amt, now() from unnest(${eT}::uuid[], ${eLeg}::int[], ${eAcct}::uuid[], ${eSide}::text[], ${eAmt}::numeric[]) as u(t, l, a, s, amt)`,
      tx`insert into floor.usage_records (id, marketplace_id, external_id, request_hash, operator_id, customer_id, resource, unit, quantity, unit_price, asset_id,
                                          gross, net, fees, fee_schedule_version, period_start, period_end, effective_at, transfer_id)
         select gen_random_uuid(), 'floor', e, '0', o, c, 'gpu:h100', 'gpu_hour', 1, 2.5, ${asset}, 2500000, 2225000, '[]', 1, now(), now(), now(), t
           from unnest(${uExt}::text[], ${uOp}::text[], ${uCust}::text[], ${ids}::uuid[]) as u(e, o, c, t)`,
    ]);
  };
  const pump = () => {
    while (inFlight < IN_FLIGHT && queue.length > 0) {
      const group = queue;
      queue = [];
      inFlight++;
      commit(group)
        .then(
          () => group.forEach((w) => w.done()),
          (error: Error) => group.forEach((w) => w.done(error)),
        )
        .finally(() => {
          inFlight--;
          pump();
        });
    }
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let record: Waiting["record"];
      try {
        record = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        res.writeHead(400).end();
        return;
      }
      queue.push({
        record,
        done: (error) => {
          const body = JSON.stringify(error ? { error: error.message } : { external_id: record.external_id, status: "accepted" });
          res.writeHead(error ? 500 : 201, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body);
        },
      });
      pump();
    });
  });
  server.listen(0, "127.0.0.1", () => {
    const address = server.address();
    process.send!({ port: typeof address === "object" && address ? address.port : 0 });
  });
  process.on("message", () => process.send!({ cpu: process.cpuUsage() }));
  process.on("disconnect", () => process.exit(0));
}

async function main() {
  const seconds = Number(process.argv[2] ?? 15);
  const { url, settings } = await freshBenchDatabase("ledger_bench_floor");
  const db = await openDatabase({ url, maxConnections: 2 });
  await runMigrations(db);
  await db.close();
  const sql = postgres(url, { max: 4, onnotice: () => {} });
  await sql.unsafe(`
    create schema floor;
    create table floor.transfers (like public.transfers including defaults including identity including indexes including constraints);
    create table floor.entries (like public.entries including defaults including identity including indexes including constraints);
    create table floor.usage_records (like public.usage_records including defaults including indexes including constraints);`);

  const log = (s: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${s}`);
  const child = fork(fileURLToPath(import.meta.url), ["serve", url], { execArgv: ["--import", "tsx"] });
  const port = await new Promise<number>((resolve) => child.once("message", (m: { port: number }) => resolve(m.port)));
  const http = client(`http://127.0.0.1:${port}`, "none");
  let n = 0;
  const post = async () => {
    const id = `f-${++n}`;
    const r = await http.call("POST", "/v1/usage", { external_id: id, operator_id: `op-${n % 1000}`, customer_id: `c-${n % 997}`, quantity: "60" });
    if (r.status !== 201) throw new Error(`floor: ${r.status} ${JSON.stringify(r.body)}`);
    return 1;
  };
  log("warm-up, 2 s …");
  await timed(64, 2000, post);
  log(`the floor server: 64 connections, one record each, ${seconds} s …`);
  const childCpu = () =>
    new Promise<number>((resolve) => {
      child.once("message", (m: { cpu: NodeJS.CpuUsage }) => resolve(m.cpu.user + m.cpu.system));
      child.send("cpu");
    });
  const before = { server: await childCpu(), postgres: postgresCpuMicros() };
  const floor = await timed(64, seconds * 1000, post);
  const cpu = { server: (await childCpu()) - before.server, postgres: postgresCpuMicros() - before.postgres };
  child.disconnect();
  log(`the naive writer, ${seconds} s …`);
  const naiveRun = await naive(sql, seconds);
  const [written] = await sql<{ count: number }[]>`select count(*)::int as count from floor.usage_records`;
  await sql.end();

  const result = {
    at: new Date().toISOString(),
    seconds,
    postgres: settings,
    floor_single_records_per_s: Math.round(floor.units / floor.seconds),
    floor_single_p50_ms: +percentile(floor.latencies, 50).toFixed(1),
    floor_single_p99_ms: +percentile(floor.latencies, 99).toFixed(1),
    floor_rows_written: written!.count,
    floor_server_cpu_us_per_record: Math.round(cpu.server / floor.units),
    floor_postgres_cpu_us_per_record: Math.round(cpu.postgres / floor.units),
    baseline_naive_records_per_s: Math.round(naiveRun.recordsPerSecond),
  };
  const ratio = result.floor_single_records_per_s / result.baseline_naive_records_per_s;
  console.table({
    "floor server, 64 connections": { "records/s": result.floor_single_records_per_s, p50_ms: result.floor_single_p50_ms, p99_ms: result.floor_single_p99_ms },
    "naive writer, 4 connections": { "records/s": result.baseline_naive_records_per_s },
  });
  console.log(`CPU per record: the floor server ${result.floor_server_cpu_us_per_record} µs, PostgreSQL ${result.floor_postgres_cpu_us_per_record} µs`);
  console.log(`floor ÷ naive: ${ratio.toFixed(2)} (the target for the service: 3)`);
  writeFileSync(
    join(fileURLToPath(new URL(".", import.meta.url)), "results", "single-floor.json"),
    `${JSON.stringify({ ...result, floor_vs_naive: +ratio.toFixed(2) }, null, 2)}\n`,
  );
}

/** The CPU (µs) every PostgreSQL process of this machine has used so far, from /proc. */
function postgresCpuMicros(): number {
  let ticks = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      if (!stat.includes("(postgres)")) continue;
      const f = stat.split(") ")[1]!.split(" ");
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      /* the process ended */
    }
  }
  return ticks * 10_000;
}
