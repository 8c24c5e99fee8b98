/**
 * `npm run bench` (about 6 minutes; `-- --quick`, about a minute): the service's throughput and
 * latency against the PostgreSQL of DATABASE_URL (default: the local server), with durable
 * commits. Starts the service in its own process on a fresh database, seeds one marketplace, one
 * fee schedule, 1,000 operators and 1,000 prepaid customers, drives load over HTTP from this
 * process, runs the yardsticks (bench/baselines.ts), prints a table and writes
 * bench/results/latest.json. See docs/performance.md.
 */
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { encodeFunctionData, parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { TestStablecoin } from "../contracts/artifacts.js";
import { chainSettingsFor, CHAIN_ID, freePort, startLocalChain } from "../scripts/anvil-chain.js";
import { naive, raw } from "./baselines.js";
import { freshBenchDatabase } from "./database.js";
import { eventRelayComparison, holdRelay, skipRelayBacklog } from "./events.js";
import { client, handOverDeposits, percentile, pool, timed, usageRecords } from "./load.js";
import { mixedIngest } from "./mixed.js";
import { probeFigures, startProbes } from "./probes.js";
import { startScriptNodeFlags } from "./service-flags.js";
import { watchStatements } from "./statement-watch.js";

const quick = process.argv.includes("--quick");
const SECONDS = quick ? 8 : 30;
const OPERATORS = 1000;
const CUSTOMERS = 1000;
const root = join(import.meta.dirname, "..");
const log = (s: string) => {
  // A scenario's announcement: the statement watcher names it with what it sees from now on.
  if (s.endsWith("…")) watch.scenario(s.split(":")[0]!.trim());
  process.stdout.write(`${s}\n`);
};
const { url: dbUrl, settings } = await freshBenchDatabase("ledger_bench");
const watch = watchStatements(dbUrl);

const chain = await startLocalChain();
await chain.send({ to: chain.token, data: encodeFunctionData({ abi: TestStablecoin.abi, functionName: "mint", args: [chain.vault, 10n ** 15n] }) });
await chain.send({ to: chain.vault, value: parseEther("100") });
const port = await freePort();
const adminKey = `bench-admin-${generatePrivateKey().slice(2, 34)}`;
const env: NodeJS.ProcessEnv = {
  ...process.env,
  DATABASE_URL: dbUrl,
  PORT: String(port),
  ADMIN_API_KEY: adminKey,
  LOG_LEVEL: "warn",
  TREASURY_SIGNER_KEY: chain.signerKey,
  CHAINS: JSON.stringify([chainSettingsFor(chain, { confirmations: 1, max_batch_size: 100 })]),
  PAYOUT_INTERVAL_MS: "200",
  // Seals every second instead of every 5 s: the same sealing work, and the 10-million-entry fill's
  // backlog is sealed in minutes before that scenario is measured.
  JOURNAL_SEAL_INTERVAL_MS: "1000",
};
const server = spawn(process.execPath, [...startScriptNodeFlags(root), "--import", "tsx", "src/main.ts"], {
  cwd: root,
  env,
  stdio: ["ignore", "ignore", "inherit"],
});
const base = `http://127.0.0.1:${port}`;
for (
  let i = 0;
  !(await fetch(`${base}/readyz`).then(
    (r) => r.ok,
    () => false,
  ));
  i++
) {
  if (i > 600) throw new Error("the service did not start");
  await new Promise((r) => setTimeout(r, 100));
}
const peakRssMb = () => {
  const status = readFileSync(`/proc/${server.pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+)/.exec(status)![1]) / 1024;
};
const api = client(base, adminKey);
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test and benchmark helpers answer whatever JSON the API sent
const must = async (p: Promise<{ status: number; body: any }>, what: string) => {
  const r = await p;
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};

// --- seed -----------------------------------------------------------------------------------------
let t0 = performance.now();
await must(api.call("POST", "/v1/assets", { code: "TUSD", scale: 6, settlement: { kind: "erc20", chain_id: CHAIN_ID, token_address: chain.token } }), "asset");
await must(api.call("POST", "/v1/marketplaces", { id: "bench", name: "bench" }), "marketplace");
await must(
  api.call("POST", "/v1/marketplaces/bench/fee-schedules", {
    effective_from: "2020-01-01T00:00:00Z",
    rules: [
      { party: "marketplace", bps: 1000 },
      { party: "protocol", bps: 100 },
    ],
  }),
  "fees",
);
const market = (await must(api.call("POST", "/v1/api-keys", { name: "bench", role: "marketplace", scope_id: "bench" }), "key")).secret as string;
await pool(
  Array.from({ length: OPERATORS }, (_, i) => i),
  16,
  async (i) => {
    await must(api.call("POST", "/v1/operators", { id: `op-${i}`, name: `op ${i}` }, market), "operator");
  },
);
await pool(
  Array.from({ length: CUSTOMERS }, (_, i) => i),
  16,
  async (i) => {
    await must(api.call("POST", "/v1/customers", { id: `c-${i}`, billing: "prepaid" }, market), "customer");
    await must(api.call("POST", `/v1/customers/c-${i}/deposits`, { asset: "TUSD", amount: "1000000000000000" }, market), "deposit");
  },
);
// The marketplace hands over the deposits it claimed (its usage is then funded).
const finance = await handOverDeposits(api, "bench", "TUSD", 1_000_000_000_000_000n * BigInt(CUSTOMERS));
log(`seeded ${OPERATORS} operators and ${CUSTOMERS} prepaid customers in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

const record = await usageRecords(base, OPERATORS, CUSTOMERS);

async function batchIngest(seconds: number) {
  return timed(4, seconds * 1000, async () => {
    const r = await api.call("POST", "/v1/usage/batch", { records: Array.from({ length: 1000 }, record) }, market);
    if (r.status !== 200) throw new Error(`batch: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    return r.body.summary.accepted as number;
  });
}

// --- scenarios ------------------------------------------------------------------------------------
log(`batch ingest: 4 clients × 1,000 records, ${SECONDS} s, with balance reads alongside …`);
const reads: number[] = [];
let reading = true;
const reader = Promise.all(
  Array.from({ length: 2 }, async () => {
    while (reading) {
      const t = performance.now();
      const r = await api.call("GET", `/v1/operators/op-${Math.floor(Math.random() * OPERATORS)}/balances`);
      if (r.status !== 200) throw new Error(`balance read: ${r.status}`);
      reads.push(performance.now() - t);
      await new Promise((res) => setTimeout(res, 20));
    }
  }),
);
const probes = await startProbes({ base, adminKey, dbUrl, operators: OPERATORS, intervalMs: 50 });
const batch = await batchIngest(SECONDS);
reading = false;
await reader;
const floor = probeFigures(await probes.stop(), "during_batch");

// What a read costs by itself: the same read, one at a time, with nothing else running (the database
// now holds the batch scenario's usage).
const idleProbes = await startProbes({ base, adminKey, dbUrl, operators: OPERATORS, intervalMs: 50 });
await new Promise((r) => setTimeout(r, 3000));
const idleFloor = probeFigures(await idleProbes.stop(), "idle");
log("balance reads on the idle service: 300, one at a time …");
const idleReads: number[] = [];
for (let i = 0; i < 300; i++) {
  const t = performance.now();
  const r = await api.call("GET", `/v1/operators/op-${Math.floor(Math.random() * OPERATORS)}/balances`);
  if (r.status !== 200) throw new Error(`balance read: ${r.status}`);
  idleReads.push(performance.now() - t);
}

log(`single ingest: 64 connections, one record each, ${SECONDS} s …`);
const single = await timed(64, SECONDS * 1000, async () => {
  const r = await api.call("POST", "/v1/usage", record(), market);
  if (r.status !== 201) throw new Error(`single: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  return 1;
});

log(`batch and single ingest at once: 2 clients × 1,000 records and 32 connections, ${SECONDS} s …`);
const mixed = await mixedIngest(api, market, record, SECONDS);
const sql = postgres(dbUrl, { max: 4, onnotice: () => {} });
log(`yardsticks: naive writer, raw inserts, raw inserts of the service's rows, ${SECONDS} s each …`);
const naiveRun = await naive(sql, SECONDS);
const rawRun = await raw(sql, SECONDS);
const rawServiceRun = await raw(sql, SECONDS, 4, 1000, "service");
log(`event relay: batch ingest with it held off, running with a GET /v1/events follower, off again, ${quick ? 5 : 15} s each …`);
const events = await eventRelayComparison(sql, api, finance, () => batchIngest(quick ? 5 : 15));

let large: { entries: number; recordsPerSecond: number } | undefined;
if (!quick) {
  log("filling the ledger to 10 million entries, then batch ingest again …");
  t0 = performance.now();
  const releaseRelay = await holdRelay(sql); // the fill is synthetic history: no events of it
  const [{ n }] = (await sql`select count(*)::int as n from entries`) as unknown as [{ n: number }];
  const [asset] = await sql`select id from assets where code = 'TUSD'`;
  await sql.unsafe(`insert into accounts (id, asset_id, marketplace_id, ref, code, owner_type, owner_id, normal_side)
    values ('00000000-0000-7000-8000-00000000f111', '${asset!.id}', null, 'bench:fill:a', 'bench', 'platform', 'bench', 'debit'),
           ('00000000-0000-7000-8000-00000000f222', '${asset!.id}', null, 'bench:fill:b', 'bench', 'platform', 'bench', 'credit');
    insert into account_balances (account_id) values ('00000000-0000-7000-8000-00000000f111'), ('00000000-0000-7000-8000-00000000f222')`);
  const perTx = 10_000;
  const transfers = Math.max(0, Math.ceil((10_000_000 - n) / 2));
  for (let done = 0; done < transfers; done += perTx) {
    const k = Math.min(perTx, transfers - done);
    await sql.begin(async (tx) => {
      await tx.unsafe(`
        with t as (
          insert into transfers (id, idempotency_key, request_hash, kind, effective_at, metadata)
          select gen_random_uuid(), 'bench-fill-' || (${done} + g), repeat('0', 64), 'standard', now(), '{}' from generate_series(1, ${k}) g
          returning id)
        insert into entries (transfer_id, leg, account_id, asset_id, side, posted_amount, pending_amount, balance_after, effective_at)
        select t.id, l.leg, l.account, '${asset!.id}', l.side, 1, 0, 0, now()
          from t cross join (values (0, '00000000-0000-7000-8000-00000000f111'::uuid, 'debit'), (1, '00000000-0000-7000-8000-00000000f222'::uuid, 'credit')) as l(leg, account, side)`);
      await tx.unsafe(`update account_balances set debits_posted = debits_posted + ${k} where account_id = '00000000-0000-7000-8000-00000000f111'`);
      await tx.unsafe(`update account_balances set credits_posted = credits_posted + ${k} where account_id = '00000000-0000-7000-8000-00000000f222'`);
    });
  }
  await skipRelayBacklog(sql);
  await releaseRelay();
  await sql`vacuum analyze entries`.catch(() => {});
  await sql`analyze transfers`;
  const [{ total }] = (await sql`select count(*)::int as total from entries`) as unknown as [{ total: number }];
  log(`  ${total.toLocaleString()} entries after ${((performance.now() - t0) / 1000).toFixed(0)} s of filling`);
  // A ledger of 10 million entries in its steady state has them sealed: wait for the service's
  // journal sealer to catch up with the fill (otherwise it seals millions of transfers during the
  // measurement), then write the fill's dirty pages out (CHECKPOINT) before measuring.
  t0 = performance.now();
  for (;;) {
    const [{ unsealed }] = (await sql`select count(*)::int as unsealed from transfers
      where txid >= (select coalesce(max(to_txid), 0) from journal_seals)`) as unknown as [{ unsealed: number }];
    if (unsealed === 0) break;
    if (performance.now() - t0 > 15 * 60_000) throw new Error(`the journal sealer did not catch up with the fill (${unsealed} transfers unsealed)`);
    await new Promise((r) => setTimeout(r, 2000));
  }
  await sql`checkpoint`;
  log(`  sealed and checkpointed after ${((performance.now() - t0) / 1000).toFixed(0)} s more`);
  const again = await batchIngest(SECONDS);
  large = { entries: total, recordsPerSecond: again.units / again.seconds };
}

log("payouts: 200 operators with verified addresses, each paid its balance, batched on anvil …");
const payees = Array.from({ length: 200 }, (_, i) => `op-${i}`);
// The operators have earnings waiting, so an admin's address for them is a proposal another person approves.
const person = async (name: string) => (await must(api.call("POST", "/v1/api-keys", { name, role: "admin" }), "key")).secret as string;
const [proposer, approver] = [await person("bench proposer"), await person("bench approver")];
await pool(payees, 8, async (id) => {
  const wallet = privateKeyToAccount(generatePrivateKey());
  const ch = await must(api.call("POST", `/v1/operators/${id}/payout-address-challenges`, { chain_id: CHAIN_ID, address: wallet.address }), "challenge");
  const body = { chain_id: CHAIN_ID, address: wallet.address, challenge_id: ch.id, signature: await wallet.signMessage({ message: ch.message }) };
  const proposal = await must(api.call("PUT", `/v1/operators/${id}/payout-address`, body, proposer), "address");
  await must(api.call("POST", `/v1/proposals/${proposal.id}/approve`, {}, approver), "address approval");
});
t0 = performance.now();
const payoutIds: string[] = [];
await pool(payees, 8, async (id) => {
  const b = (await must(api.call("GET", `/v1/operators/${id}/balances`), "balance")).data[0];
  payoutIds.push((await must(api.call("POST", "/v1/payouts", { operator_id: id, asset: "TUSD", amount: b.payable_now }), "payout")).id);
});
for (;;) {
  const [{ open }] = (await sql`select count(*)::int as open from payouts where status not in ('confirmed', 'failed')`) as unknown as [{ open: number }];
  if (open === 0) break;
  if (performance.now() - t0 > 120_000) throw new Error(`${open} payouts not final after 120 s`);
  await new Promise((r) => setTimeout(r, 100));
}
const payoutSeconds = (performance.now() - t0) / 1000;
const [{ confirmed }] = (await sql`select count(*)::int as confirmed from payouts where status = 'confirmed'`) as unknown as [{ confirmed: number }];

const rss = peakRssMb();
await sql.end();
server.kill("SIGTERM");
await new Promise((r) => server.once("exit", r));
await chain.stop();

const longest = await watch.stop();
const results = {
  run: {
    at: new Date().toISOString(),
    mode: quick ? "quick" : "full",
    seconds_per_scenario: SECONDS,
    postgres: settings!.version,
    fsync: settings!.fsync,
    synchronous_commit: settings!.sync,
    cpus: (await import("node:os")).cpus().length,
  },
  ingest_batch_records_per_s: Math.round(batch.units / batch.seconds),
  ingest_batch_p99_ms: Math.round(percentile(batch.latencies, 99)),
  ingest_single_records_per_s: Math.round(single.units / single.seconds),
  ingest_single_p50_ms: +percentile(single.latencies, 50).toFixed(1),
  ingest_single_p99_ms: +percentile(single.latencies, 99).toFixed(1),
  balance_read_p50_ms: +percentile(reads, 50).toFixed(1),
  balance_read_p99_ms: +percentile(reads, 99).toFixed(1),
  balance_read_idle_p50_ms: +percentile(idleReads, 50).toFixed(1),
  balance_read_idle_p99_ms: +percentile(idleReads, 99).toFixed(1),
  ...floor,
  ...idleFloor,
  baseline_naive_records_per_s: Math.round(naiveRun.recordsPerSecond),
  raw_insert_records_per_s: Math.round(rawRun.recordsPerSecond),
  batch_vs_raw: +(batch.units / batch.seconds / rawRun.recordsPerSecond).toFixed(2),
  raw_service_rows_records_per_s: Math.round(rawServiceRun.recordsPerSecond),
  batch_vs_raw_service_rows: +(batch.units / batch.seconds / rawServiceRun.recordsPerSecond).toFixed(2),
  ...events,
  ...mixed,
  ...(large
    ? {
        entries_at_large: large.entries,
        ingest_batch_records_per_s_at_10m_entries: Math.round(large.recordsPerSecond),
        large_vs_empty: +(large.recordsPerSecond / (batch.units / batch.seconds)).toFixed(2),
      }
    : {}),
  payouts_per_s: +(confirmed / payoutSeconds).toFixed(1),
  payouts_confirmed: confirmed,
  rss_mb_peak: Math.round(rss),
  longest_statement_ms: longest.ms,
};
mkdirSync(join(root, "bench", "results"), { recursive: true });
writeFileSync(join(root, "bench", "results", "latest.json"), `${JSON.stringify(results, null, 2)}\n`);
log("");
for (const [k, v] of Object.entries(results)) if (k !== "run") log(`${k.padEnd(44)} ${String(v).padStart(10)}`);
log(
  `\nthe service's longest statement: ${longest.ms} ms, during "${longest.scenario}"${longest.query ? `: ${longest.query}` : ""}` +
    (longest.ms > 5000 ? '\n  (seconds for one statement: a stall; docs/performance.md, "A trigger\'s plan kept from its first call")' : ""),
);
log(`\nwritten to bench/results/latest.json`);
process.exit(0);
