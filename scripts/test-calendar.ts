/**
 * `npm run test:calendar`: the date-sensitive test files (finance, usage, statements, holds, payout
 * schedules, the reports' agreement) run again with the service's clock started at calendar edges —
 * the last second of this month, of a leap February and of a year (this month's, in December) — so that a
 * test or a rule that holds only on some days fails here before the calendar finds it.
 *
 *   npm run test:calendar                       # every instant, on PGlite or TEST_DATABASE_URL
 *   npm run test:calendar -- --at 2028-02-29T23:59:59Z
 *   npm run test:calendar -- --out-dir .ci/out  # also a vitest JSON report per instant
 *
 * Each test file starts its clock at the instant when it starts (CLOCK_START), so most of a file runs
 * just after the boundary and its first steps just before it.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

export const DATE_SENSITIVE_FILES = [
  "tests/http/finance.test.ts",
  "tests/http/usage.happy.test.ts",
  "tests/http/usage.error.test.ts",
  "tests/http/customer-statement.test.ts",
  "tests/http/periods.test.ts",
  "tests/http/ledger.happy.test.ts",
  "tests/http/payouts.happy.test.ts",
  "tests/http/payouts.error.test.ts",
  "tests/integration/usage.test.ts",
  "tests/integration/payouts.test.ts",
  "tests/integration/report-agreement.property.test.ts",
];

/** The last second of the month the machine's clock is in. */
function endOfThisMonth(): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) - 1000).toISOString().replace(".000Z", "Z");
}

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const at = flag("--at");
const outDir = flag("--out-dir");
// A month's end (this month's, near the real date), a leap day's and a year's. In December this
// month's end is a year's end already, and the fixed year end would run the same boundaries again.
const thisMonthsEnd = endOfThisMonth();
const instants = at ? [at] : [thisMonthsEnd, "2028-02-29T23:59:59Z", ...(thisMonthsEnd.slice(5, 10) === "12-31" ? [] : ["2027-12-31T23:59:59Z"])];
if (outDir) mkdirSync(outDir, { recursive: true });

const failed: string[] = [];
for (const instant of instants) {
  console.log(`\n== date-sensitive tests with the clock starting at ${instant} (${process.env.TEST_DATABASE_URL ? "PostgreSQL" : "PGlite"})`);
  const reporters = outDir ? ["--reporter=default", "--reporter=json", `--outputFile=${join(outDir, `calendar-${instant.slice(0, 10)}.json`)}`] : [];
  const r = spawnSync("npx", ["vitest", "run", ...reporters, ...DATE_SENSITIVE_FILES], {
    stdio: "inherit",
    env: { ...process.env, CLOCK_START: instant },
  });
  if (r.status !== 0) failed.push(instant);
}
console.log(
  failed.length === 0
    ? `\ncalendar: the date-sensitive tests passed at ${instants.join(", ")}`
    : `\ncalendar: the date-sensitive tests FAILED at ${failed.join(", ")}`,
);
process.exitCode = failed.length === 0 ? 0 : 1;
