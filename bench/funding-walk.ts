/**
 * `npm run bench:funding-walk` (about two minutes): what an operator's balance read costs when its
 * marketplace's usage awaits money, with and without the funding mark (docs/ledger.md, "The
 * funding mark"; docs/performance.md). The app runs in this process on a fresh database of the
 * PostgreSQL at DATABASE_URL (default: the local server; durable commits). A marketplace with 50
 * operators and 200 postpaid customers posts usage in batches of 1,000 records; finance settles
 * all of it but the last 200 records, so a judgment has to find which records the money reaches.
 * At each size the benchmark reads `GET /v1/operators/op-1/balances` 200 times with the mark
 * removed (every record walked, as before marks existed), then moves the marks as the workers do
 * and reads again (only the records after the mark walked). Compare within one run. Written to
 * bench/results/funding-walk.json.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gpuUsage, inProcessApp, tailSettler } from "./in-process.js";
import { moveFundingMarks } from "../src/services/funding-marks.js";
import { percentile } from "./load.js";

const SIZES = (process.env.FUNDING_WALK_SIZES ?? "10000,40000").split(",").map(Number);
const READS = 200;
const UNFUNDED_TAIL = 200;
const root = join(import.meta.dirname, "..");
const log = (s: string) => process.stdout.write(`${s}\n`);

const { db, settings, admin: ADMIN, ok, close } = await inProcessApp("funding");

await ok("POST", "/v1/assets", ADMIN, { code: "USDC", scale: 6, settlement: { kind: "offchain" } });
await ok("POST", "/v1/marketplaces", ADMIN, { id: "m", name: "m" });
await ok("POST", "/v1/marketplaces/m/fee-schedules", ADMIN, { effective_from: "2020-01-01T00:00:00Z", rules: [{ party: "marketplace", bps: 1000 }] });
const market = (await ok("POST", "/v1/api-keys", ADMIN, { name: "m", role: "marketplace", scope_id: "m" })).secret as string;
const finance = (await ok("POST", "/v1/api-keys", ADMIN, { name: "finance", role: "finance" })).secret as string;
const controller = (await ok("POST", "/v1/api-keys", ADMIN, { name: "controller", role: "finance" })).secret as string;
for (let i = 0; i < 50; i++) await ok("POST", "/v1/operators", market, { id: `op-${i}`, name: `op-${i}` });
const operatorKey = (await ok("POST", "/v1/api-keys", ADMIN, { name: "op-1", role: "operator", scope_id: "op-1" })).secret as string;
for (let i = 0; i < 200; i++)
  await ok("POST", "/v1/customers", market, { id: `c-${i}`, billing: "postpaid", credit_limits: [{ asset: "USDC", credit_limit: (10n ** 20n).toString() }] });

const usage = gpuUsage(50, 200, ok, () => market);

/** Reads the operator's balances READS times, one after the other: milliseconds each. */
async function reads(): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < READS; i++) {
    const t0 = performance.now();
    await ok("GET", "/v1/operators/op-1/balances", operatorKey);
    out.push(performance.now() - t0);
  }
  return out;
}
const round = (x: number) => Math.round(x * 100) / 100;
const summary = (xs: number[]) => ({ p50_ms: round(percentile(xs, 50)), p99_ms: round(percentile(xs, 99)) });

const rows: Record<string, unknown>[] = [];
const settleAllButTail = tailSettler(db, ok, { finance, controller }, UNFUNDED_TAIL);
for (const size of SIZES) {
  await usage.postUpTo(size);
  // Finance settles everything but the last UNFUNDED_TAIL records.
  await settleAllButTail();
  // Statistics, as autovacuum keeps them on a server that runs it: the plan then knows that the
  // records after a mark are few (this machine's server runs without autovacuum).
  await db.query("analyze");

  // Without a mark: every record walked (as before marks existed).
  await db.transaction(async (tx) => {
    await tx.query("select set_config('ledger.marking_usage_funding', 'on', true)");
    await tx.query("delete from usage_funding_mark_customers");
    await tx.query("delete from usage_funding_marks");
  });
  await reads(); // warm
  const without = summary(await reads());
  const t0 = performance.now();
  const moved = await moveFundingMarks(db, new Date());
  const markMs = round(performance.now() - t0);
  await reads();
  const withMark = summary(await reads());
  const body = await ok("GET", "/v1/operators/op-1/balances", operatorKey);
  const row = {
    records: size,
    unfunded_records: UNFUNDED_TAIL,
    awaiting_funds: body.data[0]?.awaiting_funds ?? "0",
    without_mark: without,
    with_mark: withMark,
    mark_from_scratch_ms: markMs,
    marks_moved: moved,
    p50_ratio: round(without.p50_ms / withMark.p50_ms),
  };
  rows.push(row);
  log(
    `${String(size).padStart(6)} records, last ${UNFUNDED_TAIL} unfunded: balance read p50/p99 ${without.p50_ms}/${without.p99_ms} ms walking every record, ` +
      `${withMark.p50_ms}/${withMark.p99_ms} ms from the mark (${row.p50_ratio}× at p50); the mark made in ${markMs} ms`,
  );
}

const out = join(root, "bench/results");
mkdirSync(out, { recursive: true });
writeFileSync(
  join(out, "funding-walk.json"),
  `${JSON.stringify({ at: new Date().toISOString(), postgres: settings.version, fsync: settings.fsync, synchronous_commit: settings.sync, reads: READS, rows }, null, 2)}\n`,
);
log("written to bench/results/funding-walk.json");
await close();
