/**
 * `npm run demo`: the whole service at work in a minute, with nothing to configure.
 *
 * Starts a local chain (anvil from the npm package) with the payout vault and the test stablecoin,
 * starts the service on a fresh embedded PGlite database, and then, over the HTTP API: creates a
 * marketplace with its fee schedule, three operators (each proving its payout address by signing
 * a message), three customers who pay into the treasury on chain, posts a day of GPU usage, pays
 * every operator out on chain and reconciles the chain with the ledger. Then hybrid settlement
 * (scripts/demo-hybrid.ts): a marketplace priced in USD whose operators are paid in the stablecoin,
 * native ETH or the project token NET at on-chain price feeds' rates. Prints a report and stops
 * everything it started.
 * It talks to the service through the typed client (clients/typescript), as an integrator would.
 * `--json FILE` also writes the report as JSON. `--serve` keeps the service up afterwards and prints the
 * console's address (docs/console.md) with a key of each role, until Ctrl-C.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encodeFunctionData, parseEther } from "viem";
import { generatePrivateKey } from "viem/accounts";
import type { LedgerClient } from "../clients/typescript/index.js";
import { TestStablecoin } from "../contracts/artifacts.js";
import { chainSettingsFor, CHAIN_ID, freePort, startLocalChain } from "./anvil-chain.js";
import { deployHybridContracts, hybridChainSettings, runHybrid } from "./demo-hybrid.js";
import { printHybrid } from "./demo-hybrid-report.js";
import { addOperator, addPrepaidCustomer, demoApi } from "./demo-parties.js";
import { serveConsole } from "./demo-serve.js";

const jsonOut = process.argv.includes("--json") ? process.argv[process.argv.indexOf("--json") + 1] : undefined;
const root = join(import.meta.dirname, "..");
const work = mkdtempSync(join(tmpdir(), "ledger-demo-"));
const say = (s: string) => process.stdout.write(`${s}\n`);

// --- a local chain and the service on it -------------------------------------------------------
say("starting a local chain (anvil) and deploying the payout vault, the test stablecoin (TUSD), the project token (NET) and price feeds …");
const chain = await startLocalChain({ blockTime: 1 });
const stops: Array<() => Promise<void>> = [() => chain.stop()];
let exitCode = 0;
try {
  await chain.send({ to: chain.token, data: encodeFunctionData({ abi: TestStablecoin.abi, functionName: "mint", args: [chain.vault, 1_000_000_000_000n] }) });
  await chain.send({ to: chain.vault, value: parseEther("100") });
  // Before the service starts: its chain settings name NET and the price feeds.
  const contracts = await deployHybridContracts(chain);
  const hybridSettings = hybridChainSettings(contracts);
  const startBlock = (await chain.public.getBlockNumber()) + 1n;
  writeFileSync(join(work, "signer-key"), `${chain.signerKey}\n`, { mode: 0o600 });
  const { signer_key_env: _e, ...settings } = chainSettingsFor(chain, {
    confirmations: 2,
    assets: [{ code: "TUSD", token: chain.token, decimals: 6 }, { code: "ETH", decimals: 18 }, hybridSettings.asset],
    price_feeds: hybridSettings.price_feeds,
    signer_key_file: join(work, "signer-key"),
  });
  writeFileSync(join(work, "chains.json"), JSON.stringify([settings]));

  const port = await freePort();
  const adminKey = `demo-admin-${generatePrivateKey().slice(2, 34)}`;
  say(`starting the service on embedded PGlite (${work}) …`);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PGLITE_DATA_DIR: join(work, "pglite"),
    ADMIN_API_KEY: adminKey,
    PORT: String(port),
    LOG_LEVEL: "warn",
    CHAINS_FILE: join(work, "chains.json"),
    PAYOUT_INTERVAL_MS: "300",
    JOURNAL_SEAL_INTERVAL_MS: "500",
  };
  // The demo's own embedded database and chain, whatever the shell has set.
  delete env.DATABASE_URL;
  delete env.CHAINS;
  delete env.ADMIN_API_KEY_FILE;
  const service = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], { cwd: root, stdio: ["ignore", "ignore", "pipe"], env });
  let serviceErr = "";
  service.stderr!.on("data", (d) => (serviceErr += d));
  stops.unshift(async () => {
    if (service.exitCode !== null) return;
    const exited = new Promise((r) => service.once("exit", r));
    service.kill("SIGTERM");
    await exited;
  });
  const api = demoApi(`http://127.0.0.1:${port}`, adminKey);
  const { admin, ok, header, secret } = api;
  // Up to 90 s: on a busy machine compiling the service and migrating a new database takes a while.
  const startedBy = Date.now() + 90_000;
  for (;;) {
    const ready = await admin.GET("/readyz").then(
      (r) => r.response.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > startedBy || service.exitCode !== null)
      throw new Error(
        `the service did not ${service.exitCode === null ? "answer /readyz within 90 s" : `start (exit code ${service.exitCode})`}: ${serviceErr}`,
      );
    await new Promise((r) => setTimeout(r, 200));
  }

  // --- the marketplace, its operators and customers ------------------------------------------------
  say("setting up a marketplace, its fee schedule, 3 operators with verified payout addresses and 3 customers …");
  ok(
    await admin.POST("/v1/assets", {
      params: { header: header() },
      body: { code: "TUSD", scale: 6, settlement: { kind: "erc20", chain_id: CHAIN_ID, token_address: chain.token } },
    }),
  );
  ok(await admin.POST("/v1/assets", { params: { header: header() }, body: { code: "ETH", scale: 18, settlement: { kind: "native", chain_id: CHAIN_ID } } }));
  ok(await admin.POST("/v1/marketplaces", { params: { header: header() }, body: { id: "gpu-cloud", name: "GPU Cloud" } }));
  ok(
    await admin.POST("/v1/marketplaces/{id}/fee-schedules", {
      params: { path: { id: "gpu-cloud" }, header: header() },
      body: {
        effective_from: "2020-01-01T00:00:00Z",
        rules: [
          { party: "marketplace", bps: 800 },
          { party: "protocol", bps: 200 },
        ],
      },
    }),
  );
  const market = api.client(await secret({ name: "gpu-cloud", role: "marketplace", scope_id: "gpu-cloud" }));
  const operators = [
    { id: "nordic-gpu", name: "Nordic GPU", gpus: ["gpu:h100-80gb", "gpu:a100-80gb"] },
    { id: "lagos-compute", name: "Lagos Compute", gpus: ["gpu:rtx4090", "gpu:l40s"] },
    { id: "andes-ai", name: "Andes AI", gpus: ["gpu:h100-80gb", "gpu:l40s", "gpu:rtx4090"] },
  ];
  const operatorClients = new Map<string, LedgerClient>();
  for (const o of operators) operatorClients.set(o.id, await addOperator(api, market, o));
  // The customers pay 5,000 TUSD each into the treasury on chain, from addresses they registered
  // (signing the registration message): money received, which the deposit scanner credits to them
  // and which funds their usage, so that the operators can be paid from it.
  const customers = ["acme-labs", "orbit-ml", "pixel-forge"];
  const deposit = 5_000_000_000n;
  for (const c of customers) await addPrepaidCustomer(api, chain, market, "gpu-cloud", c, deposit);
  say("the customers paid 3 × 5,000 TUSD into the treasury on chain; waiting for the deposit scanner to credit them …");
  for (let i = 0; ; i++) {
    const funding = ok(await admin.GET("/v1/marketplaces/{id}/funding/{asset}", { params: { path: { id: "gpu-cloud", asset: "TUSD" } } }));
    if (BigInt(funding.customers_received) === deposit * BigInt(customers.length)) break;
    if (i > 120) throw new Error(`deposits not credited: ${JSON.stringify(funding)}`);
    await new Promise((r) => setTimeout(r, 500));
  }

  // --- a day of usage ------------------------------------------------------------------------------
  const prices: Record<string, string> = { "gpu:h100-80gb": "2.49", "gpu:a100-80gb": "1.29", "gpu:l40s": "0.99", "gpu:rtx4090": "0.44" };
  // Yesterday by the service's clock (GET /healthz tells its time).
  const today = new Date(ok(await admin.GET("/healthz")).time);
  const day = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - 1));
  // Each operator declares what it can sell: 8 GPUs of each class it runs, from the start of the day
  // (docs/usage.md, "Capacity"). Raw HTTP: these routes are newer than the generated client.
  const raw = async (apiKey: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...header() },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const economicsKeys = new Map<string, string>();
  for (const o of operators) {
    economicsKeys.set(o.id, await secret({ name: `${o.id} economics`, role: "operator", scope_id: o.id }));
    for (const gpu of o.gpus)
      await raw(economicsKeys.get(o.id)!, "POST", `/v1/operators/${o.id}/capacity`, { resource: gpu, units: 8, effective_from: day.toISOString() });
  }
  let rnd = 20261129;
  const random = () => (rnd = (rnd * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const records = [];
  for (let hour = 0; hour < 24; hour++) {
    for (const o of operators) {
      for (const gpu of o.gpus) {
        if (random() < 0.25) continue; // idle this hour
        const gpus = 1 + Math.floor(random() * 8);
        const seconds = gpus * (900 + Math.floor(random() * 2700)); // GPU-seconds in this hour
        const start = new Date(day.getTime() + hour * 3_600_000);
        records.push({
          external_id: `${o.id}-${gpu}-${hour}`,
          operator_id: o.id,
          customer_id: customers[Math.floor(random() * customers.length)],
          resource: gpu,
          unit: "gpu_second",
          quantity: String(seconds),
          unit_price: (Number(prices[gpu]) / 3600).toFixed(8),
          asset: "TUSD",
          period_start: start.toISOString(),
          period_end: new Date(start.getTime() + 3_600_000).toISOString(),
        });
      }
    }
  }
  const batch = ok(await market.POST("/v1/usage/batch", { params: { header: header() }, body: { records } }));
  const accepted = batch.summary.accepted;
  if (batch.summary.rejected > 0) throw new Error(`usage rejected: ${JSON.stringify(batch.results.find((r) => r.status === "rejected"))}`);
  say(`posted a day of GPU usage: ${accepted} records on ${Object.keys(prices).length} GPU types`);

  // --- payouts -------------------------------------------------------------------------------------
  say("paying every operator what is payable now (all of it: its customers' money was received) on chain …");
  const payoutIds: string[] = [];
  for (const o of operators) {
    const operator = operatorClients.get(o.id)!;
    const balance = ok(await operator.GET("/v1/operators/{id}/balances", { params: { path: { id: o.id } } })).data.find((b) => b.asset === "TUSD")!;
    if (balance.payable_now !== balance.available) throw new Error(`${o.id}: ${balance.awaiting_funds} TUSD awaiting funds`);
    payoutIds.push(ok(await operator.POST("/v1/payouts", { params: { header: header() }, body: { asset: "TUSD", amount: balance.payable_now } })).id);
  }
  const deadline = Date.now() + 60_000;
  let payouts: Array<{ id: string; operator_id: string; amount: string; status: string; tx_hash: string | null; block_number: string | null }> = [];
  for (;;) {
    payouts = await Promise.all(payoutIds.map(async (id) => ok(await admin.GET("/v1/payouts/{id}", { params: { path: { id } } }))));
    if (payouts.every((p) => p.status === "confirmed" || p.status === "failed")) break;
    if (Date.now() > deadline) throw new Error(`payouts not final: ${JSON.stringify(payouts.map((p) => p.status))}`);
    await new Promise((r) => setTimeout(r, 500));
  }

  // --- reconciliation and the report ---------------------------------------------------------------
  // Up to the last final block (2 confirmations; a block a second).
  await chain.test.mine({ blocks: 2 });
  const final = Number(await chain.public.getBlockNumber()) - 1;
  const recon = ok(
    await admin.POST("/v1/reconciliations", {
      params: { header: header() },
      body: { chain_id: CHAIN_ID, asset: "TUSD", from_block: Number(startBlock), to_block: final },
    }),
  );
  // Usage counts when its period ends: the day's last hour ends at midnight.
  const from = day.toISOString();
  const to = new Date(day.getTime() + 86_400_000 + 1).toISOString();
  const earnings = await Promise.all(
    operators.map(async (o) => ({
      operator: o.id,
      rows: ok(
        await operatorClients.get(o.id)!.GET("/v1/operators/{id}/earnings", { params: { path: { id: o.id }, query: { from, to, group_by: "resource" } } }),
      ).data,
    })),
  );
  // Utilisation and net per available GPU-hour, per GPU class (docs/usage.md, "Utilisation").
  const economics = new Map<string, { utilisation: string | null; net_per_available_unit_hour: string | null; available_unit_hours: string | null }>();
  for (const o of operators) {
    const q = new URLSearchParams({ from, to, group_by: "resource" });
    const body = (await raw(economicsKeys.get(o.id)!, "GET", `/v1/operators/${o.id}/earnings?${q}`)) as {
      data: { group: string; utilisation: string | null; net_per_available_unit_hour: string | null; available_unit_hours: string | null }[];
    };
    for (const r of body.data) economics.set(`${o.id}|${r.group}`, r);
  }
  const fees = ok(await admin.GET("/v1/reports/fee-revenue", { params: { query: { from, to, group_by: "day" } } })).data;
  const hybrid = await runHybrid(api, chain, contracts, day, say);
  const trial = ok(await admin.GET("/v1/reports/trial-balance"));
  const verify = ok(await admin.GET("/v1/audit/verify"));

  const units = (s: string) => (Number(BigInt(s)) / 1e6).toFixed(2);
  // For display only: the exact figure is the report's string.
  const pct = (u: string | null) => (u === null ? "-" : `${(Number(u) * 100).toFixed(1)}%`);
  const report = {
    usage_day: from.slice(0, 10),
    records: accepted,
    operators: earnings.map((e) => ({
      operator: e.operator,
      by_gpu: e.rows.map((r) => ({
        gpu: r.group,
        gpu_hours: r.paid_hours,
        gross: r.gross,
        net: r.net,
        effective_rate_per_hour: r.effective_rate_per_hour,
        available_gpu_hours: economics.get(`${e.operator}|${r.group}`)?.available_unit_hours ?? null,
        utilisation: economics.get(`${e.operator}|${r.group}`)?.utilisation ?? null,
        net_per_available_gpu_hour: economics.get(`${e.operator}|${r.group}`)?.net_per_available_unit_hour ?? null,
      })),
      net: e.rows.reduce((n, r) => n + BigInt(r.net), 0n).toString(),
    })),
    // Summed over the report's days (the day's last hour ends at midnight, on the next day).
    fees: [
      ...fees
        .reduce(
          (
            m: Map<string, { party: string; marketplace_id: string | null; revenue: bigint }>,
            f: { party: string; marketplace_id: string | null; revenue: string },
          ) => {
            const k = `${f.party}|${f.marketplace_id ?? ""}`;
            const e = m.get(k) ?? { party: f.party, marketplace_id: f.marketplace_id, revenue: 0n };
            e.revenue += BigInt(f.revenue);
            return m.set(k, e);
          },
          new Map(),
        )
        .values(),
    ].map((f) => ({ ...f, revenue: f.revenue.toString() })),
    payouts: payouts.map((p) => ({ operator: p.operator_id, amount: p.amount, status: p.status, tx_hash: p.tx_hash, block: p.block_number })),
    reconciliation: { id: recon.id, from_block: recon.from_block, to_block: recon.to_block, summary: recon.summary },
    hybrid,
    trial_balance: trial.totals,
    ledger_verified: verify.ok,
  };

  say("\n=== A day on GPU Cloud (TUSD; fees: marketplace 8%, protocol 2%) ===\n");
  say("Operators' earnings, realised rates (net per paid GPU-hour), utilisation of 8 GPUs per class, and net per available GPU-hour");
  for (const o of report.operators) {
    say(`  ${o.operator.padEnd(14)} net ${units(o.net).padStart(10)} TUSD`);
    for (const g of o.by_gpu)
      say(
        `    ${g.gpu.padEnd(16)} ${String(g.gpu_hours).padStart(12)} GPU-h  gross ${units(g.gross).padStart(9)}  net ${units(g.net).padStart(9)}  ${g.effective_rate_per_hour}/h` +
          `  utilisation ${pct(g.utilisation)}  ${g.net_per_available_gpu_hour ?? "-"}/available h`,
      );
  }
  say("\nFees by party");
  for (const f of report.fees) say(`  ${f.party.padEnd(12)} ${(f.marketplace_id ?? "(all)").padEnd(10)} ${units(f.revenue).padStart(10)} TUSD`);
  say("\nPayouts");
  for (const p of report.payouts)
    say(`  ${p.operator.padEnd(14)} ${units(p.amount).padStart(10)} TUSD  ${p.status}  ${p.tx_hash ?? ""} (block ${p.block ?? "-"})`);
  say(
    `\nReconciliation of blocks ${recon.from_block}-${recon.to_block}: ${Object.entries(recon.summary)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}`,
  );
  printHybrid(hybrid, say);
  say("\nTrial balance");
  for (const t of report.trial_balance)
    say(`  ${t.asset.padEnd(6)} debits ${t.debits.padStart(16)}  credits ${t.credits.padStart(16)}  ${t.balanced ? "balanced" : "NOT BALANCED"}`);
  say(`\nLedger invariants and hash chain: ${verify.ok ? "verified" : "VIOLATED"}`);
  if (jsonOut) writeFileSync(jsonOut, JSON.stringify(report, null, 2));
  if (process.argv.includes("--serve")) await serveConsole(`http://127.0.0.1:${port}`, api, adminKey, say);
  const parts = hybrid.payouts.flatMap((p) => p.parts);
  if (!verify.ok || payouts.some((p) => p.status !== "confirmed") || parts.some((p) => p.status !== "confirmed")) exitCode = 1;
} catch (err) {
  console.error(`demo failed: ${err instanceof Error ? err.message : String(err)}`);
  exitCode = 1;
} finally {
  for (const stop of stops) await stop().catch(() => {});
  rmSync(work, { recursive: true, force: true });
}
process.exit(exitCode);
