/**
 * `npm run chaos` (about 10 minutes; `-- --quick`, about 2 minutes, run by CI): the service under
 * faults. Starts a private PostgreSQL server (its own data folder and port, so that it can be
 * crashed without touching anything else), then runs each scenario of chaos/scenarios.ts on a
 * fresh database: the API process SIGKILLed during ingest, PostgreSQL crashed and restarted under
 * load, the payout worker killed at random points with the RPC cut, two API processes and two
 * workers on one database, webhook delivery to a failing receiver with a worker killed. After
 * each, the checks (nothing acknowledged lost, nothing doubled, chain and ledger one to one,
 * every webhook event delivered in order, `npm run verify`). Prints a table, writes
 * chaos/results/{full,quick}[-pgbouncer].json, exits 1 when any check fails. `--only NAME[,NAME…]` runs those scenarios.
 * `--pgbouncer` puts a PgBouncer in transaction pooling mode in front of that server: the service's
 * processes connect through it (DATABASE_POOLER=transaction), the checks directly.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../scripts/anvil-chain.js";
import { PgBouncerChild } from "../scripts/pgbouncer-server.js";
import { Cluster } from "./cluster.js";
import { databasePath, root, running } from "./harness.js";
import { scenarios, type Outcome } from "./scenarios.js";

const quick = process.argv.includes("--quick");
const withPgbouncer = process.argv.includes("--pgbouncer");
const only = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1]?.split(",") : undefined;
const log = (s: string) => process.stdout.write(`${s}\n`);
const unknown = (only ?? []).filter((name) => !scenarios.some((s) => s.name === name));
const chosen = unknown.length > 0 ? [] : scenarios.filter((s) => !only || only.includes(s.name));
if (chosen.length === 0) {
  console.error(`no scenario named ${unknown.join(", ") || "(none given)"}; known: ${scenarios.map((s) => s.name).join(", ")}`);
  process.exit(2);
}

const started = Date.now();
const cluster = await Cluster.create(await freePort());
const bouncerDir = withPgbouncer ? mkdtempSync(join(tmpdir(), "ledger-chaos-pgbouncer-")) : undefined;
const bouncer = bouncerDir
  ? await PgBouncerChild.start({ dir: bouncerDir, port: await freePort(), serverHost: "127.0.0.1", serverPort: cluster.port, users: ["postgres"] })
  : undefined;
const stopBouncer = async () => {
  await bouncer?.stop();
  if (bouncerDir) rmSync(bouncerDir, { recursive: true, force: true });
};
if (bouncer) databasePath.via = (url) => bouncer.via(url);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    for (const child of running) child.kill("SIGKILL");
    void stopBouncer()
      .then(() => cluster.destroy())
      .finally(() => process.exit(130));
  });
}
log(`chaos (${quick ? "quick" : "full"}): private PostgreSQL at ${cluster.url} (fsync and synchronous_commit on)`);
if (bouncer) log(`the service's processes connect through PgBouncer (transaction pooling) at ${bouncer.via(cluster.url)}`);
const results: (Outcome & { scenario: string; description: string; seconds: number; ok: boolean; error?: string })[] = [];
try {
  for (const s of chosen) {
    log(`\n== ${s.name}: ${s.description}`);
    const t = Date.now();
    try {
      const o = await s.run({ cluster, quick, log });
      const ok = o.findings.every((f) => f.ok) && o.lost === 0 && o.duplicated === 0;
      results.push({ scenario: s.name, description: s.description, seconds: Math.round((Date.now() - t) / 1000), ok, ...o });
      for (const f of o.findings) log(`  ${f.ok ? "ok  " : "FAIL"} ${f.check}: ${f.detail}`);
      log(`  operations ${JSON.stringify(o.operations)}`);
      log(`  faults     ${JSON.stringify(o.faults)}`);
      log(`  lost ${o.lost}, duplicated ${o.duplicated} — ${ok ? "passed" : "FAILED"} in ${Math.round((Date.now() - t) / 1000)} s`);
    } catch (err) {
      log(`  FAIL the scenario did not finish: ${(err as Error).stack ?? String(err)}`);
      results.push({
        scenario: s.name,
        description: s.description,
        seconds: Math.round((Date.now() - t) / 1000),
        ok: false,
        error: String((err as Error).message ?? err),
        operations: {},
        faults: {},
        lost: -1,
        duplicated: -1,
        client: undefined as never,
        findings: [],
      });
    }
  }
} finally {
  for (const child of running) child.kill("SIGKILL");
  await stopBouncer();
  await cluster.destroy();
}

const report = {
  run: {
    at: new Date().toISOString(),
    mode: quick ? "quick" : "full",
    pgbouncer: withPgbouncer,
    seconds: Math.round((Date.now() - started) / 1000),
    cpus: cpus().length,
    node: process.version,
  },
  ok: results.length > 0 && results.every((r) => r.ok),
  totals: {
    scenarios: results.length,
    // Kills, crashes, cuts and requests raced between processes; not durations or answers.
    faults_injected: results.reduce(
      (s, r) =>
        s +
        Object.entries(r.faults)
          .filter(([k]) => /sigkills|kills_at_step|crashes|rpc_cuts|at_once|pairs/.test(k))
          .reduce((a, [, v]) => a + v, 0),
      0,
    ),
    // Unknown (null) when a scenario did not finish: its checks never ran.
    lost: results.some((r) => r.error) ? null : results.reduce((s, r) => s + r.lost, 0),
    duplicated: results.some((r) => r.error) ? null : results.reduce((s, r) => s + r.duplicated, 0),
  },
  scenarios: results,
};
mkdirSync(join(root, "chaos", "results"), { recursive: true });
// A run through PgBouncer has a report of its own, so that both can run at once (as CI does).
const file = join("chaos", "results", `${quick ? "quick" : "full"}${withPgbouncer ? "-pgbouncer" : ""}.json`);
writeFileSync(join(root, file), `${JSON.stringify(report, null, 2)}\n`);
log("");
log(`${"scenario".padEnd(36)} ${"result".padEnd(7)} ${"seconds".padStart(7)}  faults`);
for (const r of results)
  log(`${r.scenario.padEnd(36)} ${(r.ok ? "passed" : "FAILED").padEnd(7)} ${String(r.seconds).padStart(7)}  ${JSON.stringify(r.faults)}`);
log(
  `\nlost ${report.totals.lost ?? "unknown"}, duplicated ${report.totals.duplicated ?? "unknown"}; ${report.ok ? "all scenarios passed" : "SOME SCENARIOS FAILED"} (${report.run.seconds} s); written to ${file}`,
);
process.exit(report.ok ? 0 : 1);
