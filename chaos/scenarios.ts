/**
 * The chaos scenarios. Each runs on its own fresh database of the private PostgreSQL server, drives
 * load over HTTP while faults are injected, and ends with the checks: nothing acknowledged lost,
 * nothing doubled, chain and ledger one to one, `npm run verify` passing.
 */
import { encodeFunctionData, parseAbiItem, parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import postgres from "postgres";
import { TestStablecoin } from "../contracts/artifacts.js";
import { chainSettingsFor, CHAIN_ID, freePort, startLocalChain, type LocalChain } from "../scripts/anvil-chain.js";
import { bytes32ToPayoutId, faultPoints } from "../src/domain/payouts.js";
import { TcpProxy } from "../tests/support/tcp-proxy.js";
import type { Cluster } from "./cluster.js";
import { replicaReads } from "./replica.js";
import { webhookDelivery } from "./webhooks.js";
import {
  apiProcess,
  between,
  checkClient,
  checkExits,
  checkUsage,
  ingest,
  must,
  newStats,
  pool,
  seedMarket,
  send,
  sleep,
  usageRecord,
  verify,
  workerProcess,
  type ClientStats,
  type Finding,
  type Market,
  type Service,
} from "./harness.js";

export interface Scenario {
  name: string;
  description: string;
  run(ctx: Context): Promise<Outcome>;
}

export interface Context {
  cluster: Cluster;
  quick: boolean;
  log(s: string): void;
}

export interface Outcome {
  operations: Record<string, number>;
  faults: Record<string, number>;
  lost: number;
  duplicated: number;
  client: ClientStats;
  findings: Finding[];
}

const ADMIN_KEY = `chaos-admin-${generatePrivateKey().slice(2, 34)}`;
let dbSeq = 0;
async function freshDb(ctx: Context, name: string): Promise<string> {
  return ctx.cluster.createDatabase(`chaos_${name.replace(/\W/g, "_")}_${++dbSeq}`);
}

/** Until `done` resolves: wait a random while, apply a fault, repeat (at most `max` times). */
async function repeatUntil(done: Promise<unknown>, max: number, wait: () => number, fault: () => Promise<void>): Promise<number> {
  let finished = false;
  void done.finally(() => (finished = true)).catch(() => {});
  let n = 0;
  while (!finished && n < max) {
    await Promise.race([sleep(wait()), done.catch(() => {})]);
    if (finished) break;
    await fault();
    n++;
  }
  return n;
}

function usageLoad(quick: boolean) {
  return quick ? { batches: 24, batchSize: 200, singles: 600, singleClients: 8 } : { batches: 120, batchSize: 200, singles: 3000, singleClients: 16 };
}

/** A fresh database, one API process (with its workers) on it, a marketplace with 50 operators and 50 prepaid customers in USDC. */
async function ingestWorld(ctx: Context, name: string): Promise<{ dbUrl: string; stats: ClientStats; api: Service; m: Market }> {
  const dbUrl = await freshDb(ctx, name);
  const stats = newStats();
  const api = apiProcess("api", await freePort(), { DATABASE_URL: dbUrl, ADMIN_API_KEY: ADMIN_KEY, JOURNAL_SEAL_INTERVAL_MS: "500" });
  await api.start();
  await must(stats, [api.base], "POST", "/v1/assets", ADMIN_KEY, { code: "USDC", scale: 6, settlement: { kind: "offchain" } });
  const m = await seedMarket(stats, [api.base], ADMIN_KEY, { asset: "USDC", operators: 50, customers: 50, deposit: "1000000000000" });
  return { dbUrl, stats, api, m };
}

/** The API process killed with SIGKILL, again and again, during batch and single ingest. */
const apiKill: Scenario = {
  name: "api_sigkill_during_ingest",
  description: "the API process SIGKILLed at random moments during batch and single ingest, restarted each time; clients retry with their Idempotency-Keys",
  async run(ctx) {
    const { dbUrl, stats, api, m } = await ingestWorld(ctx, "api_kill");
    try {
      const load = ingest(stats, [api.base], m, "USDC", "k", usageLoad(ctx.quick));
      const kills = await repeatUntil(
        load,
        ctx.quick ? 4 : 15,
        () => between(300, 1500),
        async () => {
          if (await api.kill()) ctx.log(`  killed the API (${api.kills})`);
          await sleep(between(50, 400));
          await api.start();
        },
      );
      const { sent, acknowledged } = await load;
      const usage = await checkUsage(dbUrl, sent, acknowledged);
      return {
        operations: { records_sent: sent.length, records_acknowledged: acknowledged.size, http_requests: stats.requests },
        faults: { api_sigkills: api.kills, requests_cut: stats.network_errors },
        lost: usage.lost,
        duplicated: usage.doubled,
        client: stats,
        findings: [
          {
            check: "the API was killed at least twice under load",
            ok: api.kills >= 2 && api.kills === kills,
            detail: `${api.kills} kills in ${kills} attempts`,
          },
          checkExits([api]),
          ...usage.findings,
          ...checkClient(stats),
          verify(dbUrl),
        ],
      };
    } finally {
      await api.stop();
    }
  },
};

/** PostgreSQL crashed (immediate stop) and restarted while ingest and reads run. */
const dbRestart: Scenario = {
  name: "postgres_restart_during_load",
  description: "PostgreSQL stopped in immediate mode (a crash) and restarted while ingest and balance reads run; the API process stays up",
  async run(ctx) {
    const { dbUrl, stats, api, m } = await ingestWorld(ctx, "db_restart");
    try {
      const load = ingest(stats, [api.base], m, "USDC", "r", usageLoad(ctx.quick));
      // Balance reads alongside: during an outage they must be 503 with Retry-After, never 500.
      const readStats = newStats();
      let reading = true;
      let readFailure = "";
      const reads = (async () => {
        while (reading && !readFailure) {
          await send(readStats, [api.base], "GET", `/v1/operators/${m.operators[between(0, 49)]}/balances`, m.key, undefined, undefined, 60_000).catch(
            (err) => {
              readFailure = String(err);
            },
          );
          await sleep(20);
        }
      })();
      const outages: { seconds: number; readyz_503: number; readyz_retry_after: number; recovered_ms: number }[] = [];
      const restarts = await repeatUntil(
        load,
        ctx.quick ? 2 : 6,
        () => between(800, 2500),
        async () => {
          await ctx.cluster.stop("immediate");
          const down = between(1500, 4000);
          const until = Date.now() + down;
          const o = { seconds: down / 1000, readyz_503: 0, readyz_retry_after: 0, recovered_ms: 0 };
          while (Date.now() < until) {
            const r = await fetch(`${api.base}/readyz`, { signal: AbortSignal.timeout(5000) }).catch(() => undefined);
            if (r?.status === 503) {
              o.readyz_503++;
              if (Number(r.headers.get("retry-after")) > 0) o.readyz_retry_after++;
            }
            await r?.text();
            await sleep(200);
          }
          await ctx.cluster.start();
          const back = Date.now();
          while (
            !(await fetch(`${api.base}/readyz`, { signal: AbortSignal.timeout(5000) }).then(
              (r) => r.ok,
              () => false,
            ))
          ) {
            if (Date.now() - back > 30_000)
              throw new Error(
                `the API did not recover within 30 s of PostgreSQL's restart (${api.alive ? "running" : "exited"}):\n${api.output().slice(-3000)}`,
              );
            await sleep(20);
          }
          o.recovered_ms = Date.now() - back;
          outages.push(o);
          ctx.log(`  PostgreSQL down ${o.seconds.toFixed(1)} s; /readyz 503 ×${o.readyz_503}; ready again ${o.recovered_ms} ms after the restart`);
        },
      );
      const { sent, acknowledged } = await load;
      reading = false;
      await reads;
      const usage = await checkUsage(dbUrl, sent, acknowledged);
      const both = { ...stats, requests: stats.requests + readStats.requests };
      return {
        operations: { records_sent: sent.length, records_acknowledged: acknowledged.size, balance_reads: readStats.requests, http_requests: both.requests },
        faults: {
          postgres_crashes: restarts,
          seconds_down: +outages.reduce((s, o) => s + o.seconds, 0).toFixed(1),
          answers_503: stats.unavailable_503 + readStats.unavailable_503,
        },
        lost: usage.lost,
        duplicated: usage.doubled,
        client: stats,
        findings: [
          { check: "balance reads answered throughout", ok: !readFailure, detail: readFailure || `${readStats.requests} reads` },
          { check: "PostgreSQL crashed at least once under load", ok: restarts >= 1, detail: `${restarts} crashes` },
          checkExits([api]),
          {
            check: "the API process stayed up (reconnected by itself)",
            ok: api.alive && api.starts === 1 && stats.network_errors === 0 && readStats.network_errors === 0,
            detail: `started ${api.starts}×, ${stats.network_errors + readStats.network_errors} connection errors ${[...stats.network_error_samples, ...readStats.network_error_samples].join(" | ")}`,
          },
          {
            check: "while PostgreSQL was down: 503 with Retry-After",
            ok: outages.every((o) => o.readyz_503 > 0 && o.readyz_retry_after === o.readyz_503) && stats.unavailable_503 + readStats.unavailable_503 > 0,
            detail: `/readyz 503 in every outage (${outages.map((o) => o.readyz_503).join(", ")}); ${stats.unavailable_503} write and ${readStats.unavailable_503} read answers 503`,
          },
          {
            check: "ready again soon after PostgreSQL is back",
            ok: outages.every((o) => o.recovered_ms < 10_000),
            detail: `${outages.map((o) => `${o.recovered_ms} ms`).join(", ")}`,
          },
          ...usage.findings,
          ...checkClient(stats),
          ...checkClient(readStats).map((f) => ({ ...f, check: `${f.check} (reads)` })),
          verify(dbUrl),
        ],
      };
    } finally {
      await api.stop();
    }
  },
};

interface PayoutSetup {
  dbUrl: string;
  chain: LocalChain;
  proxy: TcpProxy | undefined;
  apis: Service[];
  workers: Service[];
  bases: string[];
  market: Market;
  wallets: Map<string, `0x${string}`>;
  stats: ClientStats;
  close(): Promise<void>;
}

/** A chain with the vault funded, API and worker processes, a marketplace whose operators proved their addresses. */
async function payoutSetup(ctx: Context, name: string, o: { apis: number; workers: number; proxy: boolean; operators: number }): Promise<PayoutSetup> {
  const dbUrl = await freshDb(ctx, name);
  const chain = await startLocalChain();
  await chain.send({ to: chain.token, data: encodeFunctionData({ abi: TestStablecoin.abi, functionName: "mint", args: [chain.vault, 10n ** 15n] }) });
  await chain.send({ to: chain.vault, value: parseEther("100") });
  // Blocks keep coming (for confirmations) whatever the service does.
  const miner = setInterval(() => void chain.test.mine({ blocks: 1 }).catch(() => {}), 250);
  const proxy = o.proxy ? new TcpProxy(await freePort(), chain.port) : undefined;
  await proxy?.up();
  const settings = (rpc: string) =>
    JSON.stringify([
      chainSettingsFor(chain, {
        rpc_urls: [rpc],
        confirmations: 2,
        max_batch_size: 8,
        replace_after_seconds: 3,
        assets: [{ code: "TUSD", token: chain.token, decimals: 6 }],
      }),
    ]);
  const common = { DATABASE_URL: dbUrl, TREASURY_SIGNER_KEY: chain.signerKey, HOLD_EXPIRY_INTERVAL_MS: "60000" };
  const apis = await Promise.all(
    Array.from({ length: o.apis }, async (_, i) =>
      apiProcess(`api-${i + 1}`, await freePort(), { ...common, ADMIN_API_KEY: ADMIN_KEY, RUN_WORKERS: "false", CHAINS: settings(chain.rpcUrl) }),
    ),
  );
  const workers = Array.from({ length: o.workers }, (_, i) =>
    workerProcess(`worker-${i + 1}`, {
      ...common,
      CHAINS: settings(proxy ? `http://127.0.0.1:${proxy.port}` : chain.rpcUrl),
      PAYOUT_INTERVAL_MS: "150",
      JOURNAL_SEAL_INTERVAL_MS: "1000",
    }),
  );
  for (const a of apis) await a.start();
  const bases = apis.map((a) => a.base);
  const stats = newStats();
  await must(stats, bases, "POST", "/v1/assets", ADMIN_KEY, {
    code: "TUSD",
    scale: 6,
    settlement: { kind: "erc20", chain_id: CHAIN_ID, token_address: chain.token },
  });
  const market = await seedMarket(stats, bases, ADMIN_KEY, { asset: "TUSD", operators: o.operators, customers: 20, deposit: "1000000000000" });
  const wallets = new Map<string, `0x${string}`>();
  await pool(market.operators, 4, async (id) => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    // The operator's own key sets its first address, before anything is owed to it (docs/payouts.md, "Addresses").
    const own = (await must(stats, bases, "POST", "/v1/api-keys", ADMIN_KEY, { name: id, role: "operator", scope_id: id })).secret as string;
    const ch = await must(stats, bases, "POST", `/v1/operators/${id}/payout-address-challenges`, own, { chain_id: CHAIN_ID, address: wallet.address });
    const set = await must(stats, bases, "PUT", `/v1/operators/${id}/payout-address`, own, {
      chain_id: CHAIN_ID,
      address: wallet.address,
      challenge_id: ch.id,
      signature: await wallet.signMessage({ message: ch.message }),
    });
    if (set.address === undefined) throw new Error(`the payout address of ${id} was not set: ${JSON.stringify(set)}`);
    wallets.set(id, wallet.address.toLowerCase() as `0x${string}`);
  });
  return {
    dbUrl,
    chain,
    proxy,
    apis,
    workers,
    bases,
    market,
    wallets,
    stats,
    async close() {
      clearInterval(miner);
      await Promise.all([...apis, ...workers].map((s) => s.stop()));
      await proxy?.down();
      await chain.stop();
    },
  };
}

/** Waits until no payout is open (the workers running), or throws after `ms`. */
async function settle(dbUrl: string, ms: number): Promise<void> {
  const sql = postgres(dbUrl, { max: 1, onnotice: () => {} });
  try {
    const until = Date.now() + ms;
    for (;;) {
      const { open } = (await sql<{ open: number }[]>`select count(*)::int as open from payouts where status not in ('confirmed', 'failed')`)[0]!;
      if (open === 0) return;
      if (Date.now() > until) throw new Error(`${open} payouts still open after ${ms / 1000} s`);
      await sleep(200);
    }
  } finally {
    await sql.end();
  }
}

const paidEvent = parseAbiItem("event Paid(bytes32 indexed payoutId, address indexed token, address indexed recipient, uint256 amount)");

/**
 * Chain and ledger one to one: every confirmed payout has exactly one `Paid` event with its
 * recipient and amount, no event exists for anything else, each operator's wallet holds exactly
 * what the ledger says it was paid, every nonce was used once, and a reconciliation run over the
 * whole range (through the API) matches every outgoing payment.
 */
async function checkPayouts(
  s: PayoutSetup,
  acknowledged: Set<string>,
): Promise<{ findings: Finding[]; confirmed: number; failed: number; events: number; doubled: number; missing: number }> {
  const sql = postgres(s.dbUrl, { max: 1, onnotice: () => {} });
  try {
    const payouts = await sql<{ id: string; status: string; operator_id: string; to_address: string; amount: string; tx_hash: string | null }[]>`
      select id, status, operator_id, to_address, amount::text, tx_hash from payouts`;
    const head = await s.chain.public.getBlockNumber();
    const logs = await s.chain.public.getLogs({ address: s.chain.vault, event: paidEvent, fromBlock: 0n, toBlock: head });
    const eventsById = new Map<string, typeof logs>();
    for (const l of logs) {
      const id = bytes32ToPayoutId(l.args.payoutId!) ?? l.args.payoutId!;
      eventsById.set(id, [...(eventsById.get(id) ?? []), l]);
    }
    const confirmed = payouts.filter((p) => p.status === "confirmed");
    const unknown = payouts.filter((p) => !acknowledged.has(p.id));
    const missingRows = [...acknowledged].filter((id) => !payouts.some((p) => p.id === id));
    const failed = payouts.filter((p) => p.status === "failed");
    const byId = new Map(payouts.map((p) => [p.id, p]));
    const mismatched = confirmed.filter((p) => {
      const ev = eventsById.get(p.id);
      return (
        ev?.length !== 1 ||
        ev[0]!.args.amount !== BigInt(p.amount) ||
        ev[0]!.args.recipient!.toLowerCase() !== p.to_address.toLowerCase() ||
        ev[0]!.transactionHash !== p.tx_hash
      );
    });
    const doubled = [...eventsById.values()].filter((e) => e.length > 1).length;
    const strays = [...eventsById.keys()].filter((id) => byId.get(id)?.status !== "confirmed");
    const wallets: string[] = [];
    for (const [op, address] of s.wallets) {
      const ledger = confirmed.filter((p) => p.operator_id === op).reduce((a, p) => a + BigInt(p.amount), 0n);
      const onChain = await s.chain.tokenBalance(address);
      if (ledger !== onChain) wallets.push(`${op}: ledger ${ledger}, chain ${onChain}`);
    }
    const nonces = await sql<
      { nonce: string; n: number }[]
    >`select nonce::text, count(*)::int as n from chain_transactions where nonce is not null group by nonce having count(*) > 1`;
    const signerNonce = await s.chain.public.getTransactionCount({ address: s.chain.signer.address });
    const { used } = (await sql<{ used: number }[]>`select count(distinct nonce)::int as used from chain_transactions where nonce is not null`)[0]!;
    // Reconciliation as finance would run it: final blocks only.
    await sleep(1000);
    const final = (await s.chain.public.getBlockNumber()) - 1n;
    const run = await must(s.stats, s.bases, "POST", "/v1/reconciliations", ADMIN_KEY, {
      chain_id: CHAIN_ID,
      asset: "TUSD",
      from_block: 0,
      to_block: Number(final),
    });
    const { unmatched } = (
      await sql<
        { unmatched: number }[]
      >`select count(*)::int as unmatched from reconciliation_items where reconciliation_id = ${run.id} and direction = 'out' and status <> 'matched'`
    )[0]!;
    const { matched } = (
      await sql<
        { matched: number }[]
      >`select count(*)::int as matched from reconciliation_items where reconciliation_id = ${run.id} and direction = 'out' and status = 'matched'`
    )[0]!;
    return {
      confirmed: confirmed.length,
      failed: failed.length,
      events: logs.length,
      doubled,
      missing: mismatched.length + missingRows.length,
      findings: [
        {
          check: "the payouts stored are exactly the payouts acknowledged",
          ok: unknown.length === 0 && missingRows.length === 0,
          detail: `${acknowledged.size} acknowledged, ${payouts.length} stored, ${missingRows.length} missing, ${unknown.length} never acknowledged`,
        },
        {
          check: "every payout final and confirmed",
          ok: failed.length === 0 && confirmed.length === payouts.length,
          detail: `${payouts.length} payouts: ${confirmed.length} confirmed, ${failed.length} failed`,
        },
        {
          check: "each confirmed payout has exactly one matching Paid event",
          ok: mismatched.length === 0,
          detail: `${logs.length} Paid events, ${mismatched.length} confirmed payouts without exactly one matching event`,
        },
        {
          check: "no Paid event twice or for anything not confirmed",
          ok: doubled === 0 && strays.length === 0,
          detail: `${doubled} paid twice, ${strays.length} events without a confirmed payout`,
        },
        {
          check: "each operator's wallet holds what the ledger paid it",
          ok: wallets.length === 0,
          detail: wallets.length === 0 ? `${s.wallets.size} wallets agree` : wallets.slice(0, 3).join("; "),
        },
        {
          check: "every nonce used by one transaction, none skipped",
          ok: nonces.length === 0 && used === signerNonce,
          detail: `signer nonce ${signerNonce}, ${used} nonces in the ledger's transactions, ${nonces.length} used twice`,
        },
        {
          check: "reconciliation over the whole range: every outgoing payment matched",
          ok: unmatched === 0 && matched === confirmed.length,
          detail: `blocks 0–${final}: ${matched} matched, ${unmatched} not; summary ${JSON.stringify(run.summary)}`,
        },
      ],
    };
  } finally {
    await sql.end();
  }
}

/**
 * Both workers were still running at the end. (They share one signer and one database, so which
 * of them sent a given transaction is not recorded; that each one ran is what can be checked.)
 */
async function bothWorkersWorked(s: PayoutSetup): Promise<Finding> {
  const alive = s.workers.filter((w) => w.alive).length;
  return { check: "both workers ran throughout", ok: alive === s.workers.length, detail: `${alive} of ${s.workers.length} still running at the end` };
}

/** Gives operators earnings, then asks each for a payout of part of its available balance. */
async function payoutCycle(s: PayoutSetup, cycle: number, records: number, ops: string[], acknowledged: Set<string>): Promise<number> {
  const ids = Array.from({ length: records }, (_, i) => `pc${cycle}-r${i}`);
  const r = await send(
    s.stats,
    s.bases,
    "POST",
    "/v1/usage/batch",
    s.market.key,
    { records: ids.map((id) => usageRecord(s.market, "TUSD", id)) },
    `cycle-${cycle}-usage`,
  );
  if (r.status !== 200) throw new Error(`usage: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  let created = 0;
  await pool(ops, 4, async (op) => {
    const b = await must(s.stats, s.bases, "GET", `/v1/operators/${op}/balances`, ADMIN_KEY);
    const available = BigInt(b.data.find((x: { asset: string }) => x.asset === "TUSD")?.available ?? "0");
    if (available < 2n) return;
    const payout = await must(
      s.stats,
      s.bases,
      "POST",
      "/v1/payouts",
      ADMIN_KEY,
      { operator_id: op, asset: "TUSD", amount: String(available / 2n) },
      `cycle-${cycle}-payout-${op}`,
    );
    acknowledged.add(payout.id);
    created++;
  });
  return created;
}

/** The payout worker killed at random points over many payout cycles, with the RPC cut and restored. */
const workerKill: Scenario = {
  name: "payout_worker_kills_and_rpc_cuts",
  description:
    "payout cycles (earn, request, pay) while the payout worker is SIGKILLed at random moments and at each step of a payout, and its RPC connection is cut and restored",
  async run(ctx) {
    const s = await payoutSetup(ctx, "worker_kill", { apis: 1, workers: 1, proxy: true, operators: ctx.quick ? 8 : 24 });
    try {
      const worker = s.workers[0]!;
      const cycles = ctx.quick ? 8 : 40;
      let created = 0;
      const acknowledged = new Set<string>();
      const stepsReached = new Set<string>();
      let chaosOn = true;
      const work = (async () => {
        try {
          for (let c = 0; c < cycles; c++) {
            created += await payoutCycle(s, c, ctx.quick ? 40 : 60, s.market.operators, acknowledged);
            await sleep(between(800, 2500));
          }
        } finally {
          chaosOn = false;
        }
      })();
      // The worker: killed at a random moment, or set to kill itself at a chosen step (FAULT_KILL_AT), then started again.
      const killer = (async () => {
        while (chaosOn) {
          const atStep = Math.random() < 0.4 ? faultPoints[between(0, faultPoints.length - 1)] : undefined;
          const before = worker.faultExits;
          await worker.start(atStep ? { FAULT_KILL_AT: atStep } : {});
          // A worker set to die at a step gets longer to reach it.
          const lifetime = atStep ? between(3000, 8000) : between(400, 3000);
          const t = Date.now();
          while (chaosOn && worker.alive && Date.now() - t < lifetime) await sleep(50);
          if (worker.alive) await worker.kill();
          else if (worker.faultExits > before) stepsReached.add(atStep!);
          await sleep(between(50, 500));
        }
      })();
      let cuts = 0;
      let secondsCut = 0;
      const cutter = (async () => {
        while (chaosOn) {
          await sleep(between(800, 3000));
          if (!chaosOn) break;
          await s.proxy!.down();
          const d = between(300, 2500);
          await sleep(d);
          await s.proxy!.up();
          cuts++;
          secondsCut += d / 1000;
        }
      })();
      await Promise.all([work, killer, cutter]);
      const stepKills = worker.faultExits;
      ctx.log(
        `  ${created} payouts requested; worker killed ${worker.kills}× by signal, ${stepKills}× at a payout step (${[...stepsReached].join(", ")}); RPC cut ${cuts}×`,
      );
      await s.proxy!.up();
      await worker.start();
      await settle(s.dbUrl, 180_000);
      const p = await checkPayouts(s, acknowledged);
      return {
        operations: { payout_cycles: cycles, payouts: created, paid_events: p.events, http_requests: s.stats.requests },
        faults: {
          worker_sigkills_random: worker.kills,
          worker_kills_at_step: stepKills,
          steps_killed_at: stepsReached.size,
          rpc_cuts: cuts,
          rpc_seconds_cut: +secondsCut.toFixed(1),
        },
        lost: p.missing,
        duplicated: p.doubled,
        client: s.stats,
        findings: [
          {
            check: "the worker was killed and the RPC cut under load",
            ok: worker.kills + stepKills >= 2 && cuts >= 1,
            detail: `${worker.kills} kills by signal, ${stepKills} at a step (${[...stepsReached].join(", ") || "none reached"}), ${cuts} cuts`,
          },
          checkExits([...s.apis, ...s.workers]),
          ...p.findings,
          ...checkClient(s.stats),
          verify(s.dbUrl),
        ],
      };
    } finally {
      await s.close();
    }
  },
};

/** Two API processes and two payout workers on one database, every request sent to both at once. */
const twoOfEach: Scenario = {
  name: "two_apis_two_workers",
  description:
    "two API processes and two payout workers on one database; each usage request and payout request sent to both APIs at the same moment with the same Idempotency-Key, and competing payouts for the same balance",
  async run(ctx) {
    const paid = ctx.quick ? 8 : 24;
    const s = await payoutSetup(ctx, "two_of_each", { apis: 2, workers: 2, proxy: false, operators: paid + 4 });
    try {
      // The operators paid out earn only from the rounds below; the background ingest credits four
      // others (else a balance read before two competing payouts could grow before they arrive).
      const payees = s.market.operators.slice(0, paid);
      const bgMarket = { ...s.market, operators: s.market.operators.slice(paid) };
      await Promise.all(s.workers.map((w) => w.start()));
      const [a, b] = s.bases as [string, string];
      const rounds = ctx.quick ? 6 : 30;
      const sent: string[] = [];
      const acknowledged = new Set<string>();
      let racedRecords = 0;
      let racedPayouts = 0;
      let competing = 0;
      let refusedForFunds = 0;
      const disagreements: string[] = [];
      // Background load: batch and single ingest on each process while the races run.
      const bgLoad = { batches: ctx.quick ? 10 : 60, batchSize: 200, singles: ctx.quick ? 300 : 2000, singleClients: 4 };
      const background = Promise.all([ingest(s.stats, [a], bgMarket, "TUSD", "bgA", bgLoad), ingest(s.stats, [b], bgMarket, "TUSD", "bgB", bgLoad)]);
      background.catch(() => {}); // awaited below; a failure must not end the run before then
      const acknowledgedPayouts = new Set<string>();
      for (let round = 0; round < rounds; round++) {
        // The same batch to both processes at once.
        const ids = Array.from({ length: 100 }, (_, i) => `two-${round}-r${i}`);
        sent.push(...ids);
        racedRecords += ids.length;
        const body = { records: ids.map((id) => usageRecord(s.market, "TUSD", id)) };
        const answers = await Promise.all([a, b].map((base) => send(s.stats, [base], "POST", "/v1/usage/batch", s.market.key, body, `two-batch-${round}`)));
        for (const r of answers) {
          if (r.status !== 200) {
            disagreements.push(`batch ${round}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
            continue;
          }
          r.body.results.forEach((item: { status: string; id?: string; external_id?: string }, k: number) => {
            if ((item.status === "accepted" || item.status === "duplicate") && item.external_id === ids[k]) acknowledged.add(ids[k]!);
            else disagreements.push(`batch ${round} result ${k}: ${JSON.stringify(item).slice(0, 160)}`);
          });
        }
        const recordIds = answers.map((r) => JSON.stringify(r.body?.results?.map((x: { id?: string }) => x.id)));
        if (recordIds[0] !== recordIds[1]) disagreements.push(`batch ${round}: the two processes answered different records`);
        // Singles, each to both at once.
        await pool(
          Array.from({ length: 20 }, (_, i) => `two-${round}-s${i}`),
          10,
          async (id) => {
            sent.push(id);
            racedRecords++;
            const rs = await Promise.all(
              [a, b].map((base) => send(s.stats, [base], "POST", "/v1/usage", s.market.key, usageRecord(s.market, "TUSD", id), `two-single-${id}`)),
            );
            for (const r of rs) if ((r.status === 200 || r.status === 201) && r.body.external_id === id) acknowledged.add(id);
            if (rs[0]!.body?.id !== rs[1]!.body?.id) disagreements.push(`single ${id}: ${JSON.stringify(rs.map((r) => r.body?.id))}`);
          },
        );
        // Payouts: the same request to both (one payout), and two different requests for 60% of the
        // same balance (one of them must be refused).
        await pool(payees, 4, async (op) => {
          const bal = await must(s.stats, [a], "GET", `/v1/operators/${op}/balances`, ADMIN_KEY);
          const available = BigInt(bal.data.find((x: { asset: string }) => x.asset === "TUSD")?.available ?? "0");
          if (available < 10n) return;
          if (round % 2 === 0) {
            const body = { operator_id: op, asset: "TUSD", amount: String(available / 3n) };
            const rs = await Promise.all([a, b].map((base) => send(s.stats, [base], "POST", "/v1/payouts", ADMIN_KEY, body, `two-payout-${round}-${op}`)));
            racedPayouts++;
            for (const r of rs) if (r.status === 201 || r.status === 200) acknowledgedPayouts.add(r.body.id);
            if (rs.some((r) => r.status !== 201 && r.status !== 200) || rs[0]!.body.id !== rs[1]!.body.id)
              disagreements.push(`payout ${op}: ${JSON.stringify(rs.map((r) => [r.status, r.body?.id ?? r.body?.code]))}`);
          } else {
            const body = { operator_id: op, asset: "TUSD", amount: String((available * 6n) / 10n) };
            const rs = await Promise.all(
              [a, b].map((base, i) => send(s.stats, [base], "POST", "/v1/payouts", ADMIN_KEY, body, `two-compete-${round}-${op}-${i}`)),
            );
            competing++;
            for (const r of rs) if (r.status === 201) acknowledgedPayouts.add(r.body.id);
            const ok = rs.filter((r) => r.status === 201).length;
            const refused = rs.filter((r) => r.status === 422 && r.body.code === "exceeds_credits").length;
            refusedForFunds += refused;
            if (ok !== 1 || refused !== 1) disagreements.push(`competing payouts ${op}: ${JSON.stringify(rs.map((r) => [r.status, r.body?.code]))}`);
          }
        });
      }
      for (const bg of await background) {
        sent.push(...bg.sent);
        for (const id of bg.acknowledged) acknowledged.add(id);
      }
      await settle(s.dbUrl, 180_000);
      const usage = await checkUsage(s.dbUrl, sent, acknowledged);
      const p = await checkPayouts(s, acknowledgedPayouts);
      const sql = postgres(s.dbUrl, { max: 1, onnotice: () => {} });
      const { overdrawn } = (
        await sql<{ overdrawn: number }[]>`
        select count(*)::int as overdrawn from accounts a join account_balances b on b.account_id = a.id
         where a.code = 'operator_payable' and b.debits_posted + b.debits_pending > b.credits_posted`
      )[0]!;
      await sql.end();
      return {
        operations: { records_sent: sent.length, payouts: p.confirmed + p.failed, paid_events: p.events, http_requests: s.stats.requests },
        faults: {
          records_sent_to_both_at_once: racedRecords,
          payouts_sent_to_both_at_once: racedPayouts,
          competing_payout_pairs: competing,
          competing_requests_refused: refusedForFunds,
        },
        lost: usage.lost + p.missing,
        duplicated: usage.doubled + p.doubled,
        client: s.stats,
        findings: [
          {
            check: "both processes gave the same answer to the same request; of two competing payouts exactly one was accepted",
            ok: disagreements.length === 0,
            detail:
              disagreements.length === 0 ? `${racedPayouts} payout requests sent twice, ${competing} competing pairs` : disagreements.slice(0, 3).join("; "),
          },
          { check: "no operator payable overdrawn", ok: overdrawn === 0, detail: `${overdrawn} overdrawn` },
          checkExits([...s.apis, ...s.workers]),
          await bothWorkersWorked(s),
          ...usage.findings,
          ...p.findings,
          ...checkClient(s.stats),
          verify(s.dbUrl),
        ],
      };
    } finally {
      await s.close();
    }
  },
};

export const scenarios: Scenario[] = [apiKill, dbRestart, workerKill, twoOfEach, webhookDelivery, replicaReads];
