/**
 * `npm run bench:rate-lock-pass` (about two minutes): what a pass of the rate-lock worker costs a
 * marketplace whose usage awaits money, and how long that marketplace's new usage waits meanwhile
 * (docs/settlement.md, "Rate policy"; docs/performance.md). The worker walks the marketplace's
 * funding for each operator with queued earnings, under the marketplace's funding lock (exclusive):
 * usage of that marketplace waits for each walk. The app runs in this process on a fresh database of
 * the PostgreSQL at DATABASE_URL (default: the local server; durable commits). A marketplace that
 * locks the rate at earning, with 50 operators (each paid all in EUR) and 200 postpaid customers,
 * posts usage in batches of 1,000 records; finance settles all of it but the last 200 records. At
 * each size, 1,000 new records are queued and the worker's pass is timed with the funding mark
 * removed (every record walked, for each operator), then 1,000 more with the mark moved as the
 * workers do (only the records after it walked). During each pass one client posts single usage
 * records of the marketplace, one after another: their latencies are the wait (and for a second
 * without a pass, the same writer alone). Compare within one
 * run. Written to bench/results/rate-lock-pass.json.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gpuUsage, inProcessApp, tailSettler } from "./in-process.js";
import { percentile } from "./load.js";
import { Settlements } from "../src/chain/settlement.js";
import { getAssetByCode } from "../src/db/queries/assets.js";
import { insertRate } from "../src/db/queries/conversions.js";
import { uuidv7 } from "../src/domain/ids.js";
import { createLogger } from "../src/log.js";
import { moveFundingMarks } from "../src/services/funding-marks.js";
import { lockEarnedRates } from "../src/services/lock-rates.js";

const SIZES = (process.env.RATE_LOCK_SIZES ?? "10000,40000").split(",").map(Number);
const OPERATORS = 50;
const UNFUNDED_TAIL = 200;
const root = join(import.meta.dirname, "..");
const log = (s: string) => process.stdout.write(`${s}\n`);

const { db, settings, admin: ADMIN, ok, call, close } = await inProcessApp("ratelock");
const settlements = new Settlements([]);
const silent = createLogger("silent");

await ok("POST", "/v1/assets", ADMIN, { code: "USDC", scale: 6, settlement: { kind: "offchain" } });
await ok("POST", "/v1/assets", ADMIN, { code: "EUR", scale: 2, settlement: { kind: "offchain" } });
await ok("POST", "/v1/marketplaces", ADMIN, { id: "m", name: "m" });
await ok("POST", "/v1/marketplaces/m/fee-schedules", ADMIN, { effective_from: "2020-01-01T00:00:00Z", rules: [{ party: "marketplace", bps: 1000 }] });
await ok("PUT", "/v1/marketplaces/m/pricing-currency", ADMIN, { asset: "USDC", rate_policy: "at_earning" });
const market = (await ok("POST", "/v1/api-keys", ADMIN, { name: "m", role: "marketplace", scope_id: "m" })).secret as string;
const finance = (await ok("POST", "/v1/api-keys", ADMIN, { name: "finance", role: "finance" })).secret as string;
const controller = (await ok("POST", "/v1/api-keys", ADMIN, { name: "controller", role: "finance" })).secret as string;
const usdc = (await getAssetByCode(db, "USDC"))!;
const eur = (await getAssetByCode(db, "EUR"))!;
/** A manual rate of finance's, observed now (a pass needs a fresh one). */
const rate = async () => {
  const id = uuidv7();
  await insertRate(db, {
    id,
    baseAssetId: usdc.id,
    quoteAssetId: eur.id,
    num: 92n,
    den: 100n,
    observedAt: new Date(),
    source: "manual",
    sourceRef: id,
    recordedAt: new Date(),
  });
};
await rate();
for (let i = 0; i < OPERATORS; i++) {
  await ok("POST", "/v1/operators", market, { id: `op-${i}`, name: `op-${i}` });
  const key = (await ok("POST", "/v1/api-keys", ADMIN, { name: `op-${i}`, role: "operator", scope_id: `op-${i}` })).secret as string;
  await ok("PUT", `/v1/operators/op-${i}/payout-preferences/USDC`, key, { splits: [{ asset: "EUR", bps: 10_000 }] });
}
for (let i = 0; i < 200; i++)
  await ok("POST", "/v1/customers", market, { id: `c-${i}`, billing: "postpaid", credit_limits: [{ asset: "USDC", credit_limit: (10n ** 20n).toString() }] });

const usage = gpuUsage(OPERATORS, 200, ok, () => market);
const record = usage.record;
const postUpTo = usage.postUpTo;

/** Finance settles everything but the last UNFUNDED_TAIL records (a receipt, approved by a second key). */
const settleAllButTail = tailSettler(db, ok, { finance, controller }, UNFUNDED_TAIL);
const queued = async () => Number((await db.query<{ n: string }>("select count(*)::text as n from rate_lock_queue"))[0]!.n);
const dropMarks = () =>
  db.transaction(async (tx) => {
    await tx.query("select set_config('ledger.marking_usage_funding', 'on', true)");
    await tx.query("delete from usage_funding_mark_customers");
    await tx.query("delete from usage_funding_marks");
  });

/** One pass of the worker, timed, while one client posts single records of the marketplace one after another. */
async function timedPass(pass = true): Promise<{ pass_ms: number; locks: number; usage_posted: number; usage_p50_ms: number; usage_max_ms: number }> {
  await rate();
  let running = true;
  const waits: number[] = [];
  const writer = (async () => {
    while (running) {
      const t0 = performance.now();
      const r = await call("POST", "/v1/usage", market, record());
      if (r.status !== 201 && r.status !== 200) throw new Error(`usage: ${r.status} ${r.text.slice(0, 200)}`);
      waits.push(performance.now() - t0);
    }
  })();
  await new Promise((res) => setTimeout(res, 200));
  const t0 = performance.now();
  const locks = pass ? await lockEarnedRates(db, settlements, silent) : (await new Promise((res) => setTimeout(res, 1_000)), 0);
  const passMs = performance.now() - t0;
  running = false;
  await writer;
  const round = (x: number) => Math.round(x * 10) / 10;
  return { pass_ms: round(passMs), locks, usage_posted: waits.length, usage_p50_ms: round(percentile(waits, 50)), usage_max_ms: round(Math.max(...waits)) };
}

const rows: Record<string, unknown>[] = [];
for (const size of SIZES) {
  await postUpTo(size - 2_000);
  await settleAllButTail();
  await moveFundingMarks(db, new Date());
  // Drain what is queued and funded (untimed), so that each timed pass finds 1,000 new records.
  for (let i = 0; i < 5 && (await lockEarnedRates(db, settlements, silent)) > 0; i++);
  await db.query("analyze");

  await postUpTo(usage.made + 1_000);
  await settleAllButTail();
  await dropMarks();
  const before = await queued();
  const without = { queued: before, ...(await timedPass()) };

  await postUpTo(usage.made + 1_000);
  await settleAllButTail();
  await moveFundingMarks(db, new Date());
  const withMark = { queued: await queued(), ...(await timedPass()) };
  const idle = await timedPass(false);
  const row = {
    records: usage.made,
    operators: OPERATORS,
    unfunded_records: UNFUNDED_TAIL,
    without_mark: without,
    with_mark: withMark,
    usage_without_a_pass: idle,
  };
  rows.push(row);
  log(
    `${String(usage.made).padStart(6)} records: a pass over ${OPERATORS} operators took ${without.pass_ms} ms walking every record ` +
      `(usage posted meanwhile: p50 ${without.usage_p50_ms} ms, max ${without.usage_max_ms} ms), ` +
      `${withMark.pass_ms} ms from the mark (p50 ${withMark.usage_p50_ms} ms, max ${withMark.usage_max_ms} ms); locks ${without.locks} and ${withMark.locks}; ` +
      `usage posted for 1 s without a pass: p50 ${idle.usage_p50_ms} ms, max ${idle.usage_max_ms} ms`,
  );
}

const out = join(root, "bench/results");
mkdirSync(out, { recursive: true });
writeFileSync(
  join(out, "rate-lock-pass.json"),
  `${JSON.stringify({ at: new Date().toISOString(), postgres: settings.version, fsync: settings.fsync, synchronous_commit: settings.sync, rows }, null, 2)}\n`,
);
log("written to bench/results/rate-lock-pass.json");
await close();
