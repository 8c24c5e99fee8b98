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
import { naive, pushEntries, pushLegs } from "./baselines.js";
import { freshBenchDatabase } from "./database.js";
import { client, percentile, timed } from "./load.js";

const ACCOUNTS = 2002;
const IN_FLIGHT = 2;

if (process.argv[2] === "serve") await serve(process.argv[3]!, process.argv[4] === "service" ? "service" : "raw");
else await main();

type FloorRecord = { external_id: string; operator_id: string; customer_id: string };

/**
 * What one floor's group commit writes: `raw`, the raw yardstick's rows (a transfer, four entries
 * and a usage row per record); `service`, the rows the service writes for a single record and the
 * reads it makes (see serviceCommit).
 */
type Rows = "raw" | "service";

async function serve(url: string, rows: Rows) {
  // The service plans every statement at each run (src/db/client.ts); so does its floor, whose reads
  // would otherwise keep a plan made while the tables were empty (a sequential scan that grows).
  const sql = postgres(url, { max: IN_FLIGHT, onnotice: () => {}, ...(rows === "service" ? { connection: { plan_cache_mode: "force_custom_plan" } } : {}) });
  const accounts = Array.from({ length: ACCOUNTS }, () => randomUUID());
  const asset = randomUUID();
  if (rows === "service") await sql`insert into floor.account_balances (account_id) select unnest(${accounts}::uuid[])`;
  type Waiting = { record: FloorRecord; done: (error?: Error) => void };
  let queue: Waiting[] = [];
  let inFlight = 0;
  const commit = (group: Waiting[]) =>
    rows === "service"
      ? serviceCommit(
          sql,
          accounts,
          asset,
          group.map((w) => w.record),
        )
      : rawCommit(group);
  const rawCommit = async (group: Waiting[]) => {
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
  const reads = rows === "service" && !process.env.FLOOR_NO_READS ? serviceReads(sql) : undefined;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    // The service looks the API key up before it reads the body, and the Idempotency-Key's stored
    // answer after: both are reads of their own, shared by the requests of one turn of the loop.
    const keyRead = reads?.key(String(req.headers.authorization).slice(7, 19));
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      let record: Waiting["record"];
      try {
        record = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        if (reads) {
          if (!(await keyRead)) throw new Error("no key");
          if (await reads.answer(String(req.headers["idempotency-key"]))) throw new Error("replayed");
        }
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

/**
 * The reads the service makes for each single record (docs/performance.md): its API key (not kept
 * between requests: a revoked key is refused by the next read) and the answer stored for its
 * Idempotency-Key, each shared by the requests parsed in one turn of the event loop.
 */
function serviceReads(sql: postgres.Sql) {
  const shared = <V>(load: (keys: string[]) => Promise<Map<string, V>>) => {
    let pending: { key: string; resolve: (v: V | undefined) => void; reject: (e: unknown) => void }[] = [];
    return (key: string) =>
      new Promise<V | undefined>((resolve, reject) => {
        if (pending.length === 0)
          setImmediate(() => {
            const mine = pending;
            pending = [];
            load([...new Set(mine.map((p) => p.key))]).then(
              (found) => mine.forEach((p) => p.resolve(found.get(p.key))),
              (error: unknown) => mine.forEach((p) => p.reject(error)),
            );
          });
        pending.push({ key, resolve, reject });
      });
  };
  return {
    key: shared(async (prefixes) => {
      const rows = await sql<{ prefix: string; secret_hash: string }[]>`
        select prefix, secret_hash from floor.api_keys where prefix = any(${prefixes}::text[]) and revoked_at is null`;
      return new Map(rows.map((r) => [r.prefix, r.secret_hash]));
    }),
    answer: shared(async (keys) => {
      const rows = await sql<{ key: string; request_hash: string }[]>`
        select key, request_hash from floor.http_idempotency where scope = 'floor' and key = any(${keys}::text[])`;
      return new Map(rows.map((r) => [r.key, r.request_hash]));
    }),
  };
}

/**
 * One group commit of the rows the service writes for single records, with the fewest round trips
 * (every statement sent at once, then COMMIT): the marketplace's funding lock (shared), a transfer,
 * six entries (three legs, the customer debited on each), a usage row, an audit row and the
 * remembered answer per record; the balance rows of the accounts touched locked in id order and
 * updated once each. Not done, so this stays a floor: rating, validation, the running balance
 * of each entry (written as its amount), limits, opening accounts, the earned totals' triggers.
 */
async function serviceCommit(sql: postgres.Sql, accounts: string[], asset: string, records: FloorRecord[]): Promise<void> {
  const ids: string[] = [],
    keys: string[] = [],
    meta: string[] = [],
    idem: string[] = [],
    answers: string[] = [],
    eT: string[] = [],
    eLeg: number[] = [],
    eAcct: string[] = [],
    eSide: string[] = [],
    eAmt: string[] = [];
  const moves = new Map<string, { debits: bigint; credits: bigint }>();
  for (const r of records) {
    const id = randomUUID();
    ids.push(id);
    keys.push(`usage:m:${r.external_id}`);
    meta.push(JSON.stringify({ usage: { external_id: r.external_id } }));
    idem.push(`idem-${r.external_id}`);
    const c = Math.floor(Math.random() * (ACCOUNTS - 2));
    pushLegs(
      { eT, eLeg, eAcct, eSide, eAmt },
      id,
      [accounts[c]!, accounts[(c + 1) % (ACCOUNTS - 2)]!, accounts[ACCOUNTS - 2]!, accounts[ACCOUNTS - 1]!],
      moves,
    );
    answers.push(
      JSON.stringify({
        id,
        marketplace_id: "floor",
        external_id: r.external_id,
        operator_id: r.operator_id,
        customer_id: r.customer_id,
        resource: "gpu:h100",
        unit: "gpu_hour",
        quantity: "1",
        unit_price: "2.5",
        asset: "USDC",
        gross: "2.500000",
        net: "2.225000",
        fees: [
          { party: "marketplace", amount: "0.250000" },
          { party: "protocol", amount: "0.025000" },
        ],
        transfer_id: id,
        status: "posted",
      }),
    );
  }
  const touched = [...moves.keys()].sort();
  await sql.begin((tx) => [
    tx`select pg_advisory_xact_lock_shared(7420099)`,
    tx`insert into floor.transfers (id, idempotency_key, request_hash, kind, effective_at, metadata)
       select id, k, '0', 'standard', now(), m::jsonb from unnest(${ids}::uuid[], ${keys}::text[], ${meta}::text[]) as u(id, k, m)`,
    tx`insert into floor.usage_records (id, marketplace_id, external_id, request_hash, operator_id, customer_id, resource, unit, quantity, unit_price, asset_id,
                                        gross, net, fees, fee_schedule_version, period_start, period_end, effective_at, transfer_id)
       select gen_random_uuid(), 'floor', r->>'external_id', '0', r->>'operator_id', r->>'customer_id', 'gpu:h100', 'gpu_hour', 1, 2.5, ${asset}, 2500000, 2225000,
              r->'fees', 1, now(), now(), now(), t
         from unnest(${answers}::text[], ${ids}::uuid[]) as u(b, t), lateral (select b::jsonb as r) j`,
    tx`insert into floor.audit_log (key_id, role, scope_id, method, path, route, status, request_id, idempotency_key, body_bytes)
       select 'floor-key', 'marketplace', 'floor', 'POST', '/v1/usage', '/v1/usage', 201, r, k, 300 from unnest(${ids}::text[], ${idem}::text[]) as u(r, k)`,
    tx`insert into floor.http_idempotency (scope, key, method, path, request_hash, status, body)
       select 'floor', k, 'POST', '/v1/usage', '0', 201, b::jsonb from unnest(${idem}::text[], ${answers}::text[]) as u(k, b)`,
    tx`select 1 from floor.account_balances where account_id = any(${touched}::uuid[]) order by account_id for update`,
    tx`insert into floor.entries (transfer_id, leg, account_id, asset_id, side, posted_amount, pending_amount, balance_after, effective_at)
       select t, l, a, ${asset}, s, amt, 0, amt, now() from unnest(${eT}::uuid[], ${eLeg}::int[], ${eAcct}::uuid[], ${eSide}::text[], ${eAmt}::numeric[]) as u(t, l, a, s, amt)`,
    tx`update floor.account_balances b set debits_posted = b.debits_posted + d.dp, credits_posted = b.credits_posted + d.cp
         from unnest(${touched}::uuid[], ${touched.map((a) => moves.get(a)!.debits.toString())}::numeric[], ${touched.map((a) => moves.get(a)!.credits.toString())}::numeric[]) as d(id, dp, cp)
        where b.account_id = d.id`,
  ]);
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
    create table floor.usage_records (like public.usage_records including defaults including indexes including constraints);
    create table floor.audit_log (like public.audit_log including defaults including indexes including constraints);
    create table floor.http_idempotency (like public.http_idempotency including defaults including indexes including constraints);
    create table floor.account_balances (like public.account_balances including defaults including indexes including constraints);
    create table floor.api_keys (prefix text primary key, secret_hash text not null, revoked_at timestamptz);
    insert into floor.api_keys (prefix, secret_hash) values ('none', repeat('0', 64));`);

  const log = (s: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${s}`);
  const floors: Record<Rows, { units: number; seconds: number; latencies: number[]; cpu: { server: number; postgres: number } }> = {} as never;
  for (const rows of ["raw", "service"] as const) floors[rows] = await floor(url, rows, seconds, log);
  log(`the naive writer, ${seconds} s …`);
  const naiveRun = await naive(sql, seconds);
  const [written] = await sql<{ count: number }[]>`select count(*)::int as count from floor.usage_records`;
  await sql.end();

  const figures = (rows: Rows) => {
    const f = floors[rows];
    return {
      records_per_s: Math.round(f.units / f.seconds),
      p50_ms: +percentile(f.latencies, 50).toFixed(1),
      p99_ms: +percentile(f.latencies, 99).toFixed(1),
      server_cpu_us_per_record: Math.round(f.cpu.server / f.units),
      postgres_cpu_us_per_record: Math.round(f.cpu.postgres / f.units),
    };
  };
  const raw = figures("raw");
  const service = figures("service");
  const result = {
    at: new Date().toISOString(),
    seconds,
    postgres: settings,
    floor_single_records_per_s: raw.records_per_s,
    floor_single_p50_ms: raw.p50_ms,
    floor_single_p99_ms: raw.p99_ms,
    floor_server_cpu_us_per_record: raw.server_cpu_us_per_record,
    floor_postgres_cpu_us_per_record: raw.postgres_cpu_us_per_record,
    floor_service_rows_records_per_s: service.records_per_s,
    floor_service_rows_p50_ms: service.p50_ms,
    floor_service_rows_p99_ms: service.p99_ms,
    floor_service_rows_server_cpu_us_per_record: service.server_cpu_us_per_record,
    floor_service_rows_postgres_cpu_us_per_record: service.postgres_cpu_us_per_record,
    floor_rows_written: written!.count,
    baseline_naive_records_per_s: Math.round(naiveRun.recordsPerSecond),
  };
  const ratio = (x: number) => +(x / result.baseline_naive_records_per_s).toFixed(2);
  console.table({
    "floor server, the raw yardstick's rows": {
      "records/s": raw.records_per_s,
      p50_ms: raw.p50_ms,
      p99_ms: raw.p99_ms,
      "server µs/record": raw.server_cpu_us_per_record,
      "PostgreSQL µs/record": raw.postgres_cpu_us_per_record,
    },
    "floor server, the service's rows and reads": {
      "records/s": service.records_per_s,
      p50_ms: service.p50_ms,
      p99_ms: service.p99_ms,
      "server µs/record": service.server_cpu_us_per_record,
      "PostgreSQL µs/record": service.postgres_cpu_us_per_record,
    },
    "naive writer, 4 connections": { "records/s": result.baseline_naive_records_per_s },
  });
  console.log(
    `floor ÷ naive: ${ratio(raw.records_per_s)} with the raw rows, ${ratio(service.records_per_s)} with the service's rows and reads (the target for the service: 3)`,
  );
  writeFileSync(
    join(fileURLToPath(new URL(".", import.meta.url)), "results", "single-floor.json"),
    `${JSON.stringify({ ...result, floor_vs_naive: ratio(raw.records_per_s), floor_service_rows_vs_naive: ratio(service.records_per_s) }, null, 2)}\n`,
  );
}

/** Runs one floor server (a process of its own) under 64 connections for `seconds`, after a 2 s warm-up. */
async function floor(url: string, rows: Rows, seconds: number, log: (s: string) => void) {
  const child = fork(fileURLToPath(import.meta.url), ["serve", url, rows], { execArgv: ["--import", "tsx"] });
  const port = await new Promise<number>((resolve) => child.once("message", (m: { port: number }) => resolve(m.port)));
  const http = client(`http://127.0.0.1:${port}`, "none");
  let n = 0;
  const post = async () => {
    const id = `${rows}-${++n}`;
    const r = await http.call("POST", "/v1/usage", { external_id: id, operator_id: `op-${n % 1000}`, customer_id: `c-${n % 997}`, quantity: "60" });
    if (r.status !== 201) throw new Error(`floor: ${r.status} ${JSON.stringify(r.body)}`);
    return 1;
  };
  log(`${rows} rows: warm-up, 2 s …`);
  await timed(64, 2000, post);
  log(`${rows} rows: the floor server, 64 connections, one record each, ${seconds} s …`);
  const childCpu = () =>
    new Promise<number>((resolve) => {
      child.once("message", (m: { cpu: NodeJS.CpuUsage }) => resolve(m.cpu.user + m.cpu.system));
      child.send("cpu");
    });
  const before = { server: await childCpu(), postgres: postgresCpuMicros() };
  const run = await timed(64, seconds * 1000, post);
  const cpu = { server: (await childCpu()) - before.server, postgres: postgresCpuMicros() - before.postgres };
  child.disconnect();
  return { ...run, cpu };
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
