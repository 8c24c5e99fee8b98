/**
 * The read replica scenario: the private server gets a streaming replica (scripts/replica.ts), the
 * API process reads balances from it (DATABASE_REPLICA_URL), and while usage is ingested, readers
 * each write transfers into an account of their own and read its balance back with the write's
 * `Ledger-Position`, and sometimes without. Meanwhile the replica's replay is paused (it lags), then
 * it is stopped and started again. Checks: a read with a position is never below the reader's own
 * writes (it is exactly their sum: nobody else writes to the account); a read without one is a
 * balance the account had; no 5xx; the replica answers again once back; usage lost or doubled none.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { freePort } from "../scripts/anvil-chain.js";
import { startReplica, stopReplica } from "../scripts/replica.js";
import { apiProcess, between, checkClient, checkExits, checkUsage, ingest, must, newStats, seedMarket, sleep, verify } from "./harness.js";
import type { ClientStats, Finding } from "./harness.js";
import type { Context, Scenario } from "./scenarios.js";

const ADMIN_KEY = `chaos-admin-${randomBytes(16).toString("hex")}`;
const MAX_LAG_MS = 500;

interface Tally {
  reads: { replica: number; primary: number };
  withPosition: number;
  /** Reads with a position below the reader's own writes, or without one a balance that never was. */
  wrong: string[];
  /** Non-2xx answers and network errors. */
  failures: string[];
  /** Replica answers claiming more staleness than the bound (without a position). */
  overBound: number;
  phase: string;
  byPhase: Record<string, { replica: number; primary: number }>;
}

async function call(base: string, method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { "content-type": "application/json", "idempotency-key": randomBytes(12).toString("hex") }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

/** One reader: transfers into its own account, reading the balance back after each. */
async function reader(base: string, key: string, from: string, to: string, t: Tally, running: () => boolean): Promise<void> {
  let total = 0n;
  const existed = new Set<string>(["0"]);
  while (running()) {
    const amount = BigInt(between(1, 1000));
    const w = await call(base, "POST", "/v1/transfers", key, { legs: [{ debit_account_id: from, credit_account_id: to, amount: amount.toString() }] });
    if (w.status !== 201) {
      t.failures.push(`transfer: ${w.status} ${JSON.stringify(w.body).slice(0, 200)}`);
      continue;
    }
    total += amount;
    existed.add(total.toString());
    const position = w.headers.get("ledger-position");
    if (!position) t.failures.push("a write answered no Ledger-Position");
    const withToken = Math.random() < 0.8 && position !== null;
    // The phase the read started in (one in flight when a fault begins belongs to the phase before).
    const phase = t.phase;
    const r = await call(base, "GET", `/v1/accounts/${to}/balance`, key, undefined, withToken ? { "ledger-min-position": position } : {});
    if (r.status !== 200) {
      t.failures.push(`balance: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
      continue;
    }
    const source = r.headers.get("ledger-read-source") === "replica" ? "replica" : "primary";
    t.reads[source]++;
    (t.byPhase[phase] ??= { replica: 0, primary: 0 })[source]++;
    if (withToken) t.withPosition++;
    if (withToken && r.body.posted !== total.toString()) t.wrong.push(`with position ${position}: ${r.body.posted}, wrote ${total} (${source})`);
    if (!existed.has(r.body.posted)) t.wrong.push(`a balance that never was: ${r.body.posted} (${source})`);
    if (!withToken && source === "replica" && Number(r.headers.get("ledger-staleness-ms")) > MAX_LAG_MS) t.overBound++;
  }
}

async function accounts(base: string, key: string, assetId: string, n: number): Promise<{ from: string; to: string }[]> {
  const stats = newStats();
  const open = (body: Record<string, unknown>) => must(stats, [base], "POST", "/v1/accounts", key, { asset_id: assetId, ...body });
  return Promise.all(
    Array.from({ length: n }, async (_, i) => ({
      from: (await open({ code: `funding_${i}`, normal_side: "debit", ref: `funding:${i}` })).id as string,
      to: (await open({ code: `wallet_${i}`, normal_side: "credit", ref: `wallet:${i}` })).id as string,
    })),
  );
}

/** Waits until a read is answered by the replica again (at most 20 s). */
async function replicaAnswers(base: string, key: string, account: string): Promise<number> {
  const t = Date.now();
  while (Date.now() - t < 20_000) {
    const r = await call(base, "GET", `/v1/accounts/${account}/balance`, key);
    if (r.headers.get("ledger-read-source") === "replica") return Date.now() - t;
    await sleep(50);
  }
  throw new Error("no read was answered by the replica within 20 s of its return");
}

/** The faults, in order, each `ms` long: replay paused (lag), the replica stopped, then back. */
async function faults(ctx: Context, t: Tally, replicaDbUrl: string, dir: string, restart: () => Promise<void>, again: () => Promise<number>) {
  const phase = async (name: string, ms: number) => {
    t.phase = name;
    await sleep(ms);
  };
  await phase("streaming", 1500);
  const admin = postgres(replicaDbUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe("select pg_wal_replay_pause()");
  await phase("replay_paused", ctx.quick ? 2000 : 6000);
  await admin.unsafe("select pg_wal_replay_resume()");
  await admin.end();
  await phase("resumed", 1000);
  stopReplica(dir);
  await phase("replica_stopped", ctx.quick ? 2000 : 6000);
  t.phase = "replica_starting";
  await restart();
  t.phase = "replica_back";
  const backMs = await again();
  ctx.log(`  replica paused, resumed, stopped and started; reads from it again ${backMs} ms after its start`);
  await phase("replica_back", 1000);
  return backMs;
}

function findings(t: Tally, backMs: number): Finding[] {
  const p = (name: string) => t.byPhase[name] ?? { replica: 0, primary: 0 };
  return [
    {
      check: "every read with a position showed the reader's own writes; every read was a balance that existed",
      ok: t.wrong.length === 0,
      detail: t.wrong.length === 0 ? `${t.withPosition} reads with a position, ${t.reads.replica + t.reads.primary} in all` : t.wrong.slice(0, 3).join("; "),
    },
    {
      check: "every write and read answered 2xx with its headers",
      ok: t.failures.length === 0,
      detail: t.failures.length === 0 ? "none failed" : t.failures.slice(0, 3).join("; "),
    },
    {
      check: "the replica served reads while streaming and again once back",
      ok: p("streaming").replica > 0 && p("replica_back").replica > 0,
      detail: JSON.stringify(t.byPhase),
    },
    {
      check: "while the replica was stopped, the primary answered",
      ok: p("replica_stopped").primary > 0 && p("replica_stopped").replica === 0,
      detail: JSON.stringify(p("replica_stopped")),
    },
    { check: "replica answers without a position within the lag bound", ok: t.overBound === 0, detail: `${t.overBound} over ${MAX_LAG_MS} ms` },
    { check: "the replica answered again within 20 s of its start", ok: backMs < 20_000, detail: `${backMs} ms` },
  ];
}

export const replicaReads: Scenario = {
  name: "replica_lag_and_restart",
  description:
    "balance reads on a streaming replica, with and without Ledger-Min-Position, while usage is ingested and the replica lags (replay paused), is stopped and comes back",
  async run(ctx) {
    const name = `chaos_replica_${randomBytes(3).toString("hex")}`;
    const dbUrl = await ctx.cluster.createDatabase(name);
    const dir = mkdtempSync(join(tmpdir(), "ledger-chaos-replica-"));
    const port = await freePort();
    const start = (reset: boolean) => startReplica({ primaryUrl: ctx.cluster.url, port, dir, reset });
    const replicaDbUrl = `postgres://postgres@127.0.0.1:${port}/${name}`;
    let at = Date.now();
    const step = (what: string) => {
      ctx.log(`  ${what} in ${Date.now() - at} ms`);
      at = Date.now();
    };
    await start(true);
    step("replica copied (pg_basebackup) and streaming");
    const stats: ClientStats = newStats();
    const env = { DATABASE_URL: dbUrl, DATABASE_REPLICA_URL: replicaDbUrl, REPLICA_MAX_LAG_MS: String(MAX_LAG_MS), ADMIN_API_KEY: ADMIN_KEY };
    const api = apiProcess("api", await freePort(), env);
    try {
      await api.start();
      step("API process started");
      const asset = await must(stats, [api.base], "POST", "/v1/assets", ADMIN_KEY, { code: "USDC", scale: 6, settlement: { kind: "offchain" } });
      const m = await seedMarket(stats, [api.base], ADMIN_KEY, { asset: "USDC", operators: 4, customers: 4, deposit: "1000000000000" });
      const pairs = await accounts(api.base, m.key, asset.id as string, 4);
      step("marketplace and readers' accounts made");
      const t: Tally = { reads: { replica: 0, primary: 0 }, withPosition: 0, wrong: [], failures: [], overBound: 0, phase: "streaming", byPhase: {} };
      let running = true;
      const load = ingest(
        stats,
        [api.base],
        m,
        "USDC",
        "rr",
        ctx.quick ? { batches: 2, batchSize: 200, singles: 120, singleClients: 4 } : { batches: 60, batchSize: 200, singles: 2000, singleClients: 8 },
      );
      const readers = pairs.map((a) => reader(api.base, m.key, a.from, a.to, t, () => running).catch((err) => void t.failures.push(String(err))));
      let backMs = Infinity;
      try {
        backMs = await faults(
          ctx,
          t,
          replicaDbUrl,
          dir,
          () => start(false).then(() => {}),
          () => replicaAnswers(api.base, m.key, pairs[0]!.to),
        );
      } finally {
        running = false;
        await Promise.all(readers);
      }
      step("faults and reads done");
      const { sent, acknowledged } = await load;
      step("ingest done");
      const usage = await checkUsage(dbUrl, sent, acknowledged);
      return {
        operations: {
          records_sent: sent.length,
          records_acknowledged: acknowledged.size,
          reads_replica: t.reads.replica,
          reads_primary: t.reads.primary,
          reads_with_position: t.withPosition,
        },
        faults: { replay_pauses: 1, replica_stops: 1 },
        lost: usage.lost,
        duplicated: usage.doubled,
        client: stats,
        findings: [...findings(t, backMs), checkExits([api]), ...usage.findings, ...checkClient(stats), verify(dbUrl)],
      };
    } finally {
      await api.stop();
      try {
        stopReplica(dir);
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
