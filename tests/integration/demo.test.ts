import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

// The demo runs on an embedded PGlite database of its own whatever TEST_DATABASE_URL says: it is
// run once, in the suite's PGlite run, not again in the PostgreSQL run.
describe("npm run demo [PGlite run only: the demo always uses its own embedded database]", () => {
  it.skipIf(process.env.TEST_DATABASE_URL !== undefined && process.env.TEST_DATABASE_URL !== "")(
    "runs end to end: usage, payouts on chain, reconciliation, hybrid settlement at feed rates, a balanced trial balance; and stops what it started",
    () => {
      const dir = mkdtempSync(join(tmpdir(), "demo-test-"));
      try {
        const file = join(dir, "report.json");
        const run = spawnSync("npm", ["run", "--silent", "demo", "--", "--json", file], {
          cwd: join(import.meta.dirname, "..", ".."),
          encoding: "utf8",
          // Generous: it runs beside the rest of the suite, which keeps both cores busy.
          timeout: 240_000,
          env: { ...process.env, TEST_DATABASE_URL: "" },
        });
        expect(run.status, `${run.error ? `${run.error.message}\n` : ""}${run.signal ? `killed by ${run.signal}\n` : ""}${run.stdout}\n${run.stderr}`).toBe(0);
        expect(run.stdout).toMatch(/Ledger invariants and hash chain: verified/);
        const report = JSON.parse(readFileSync(file, "utf8"));
        expect(report.records).toBeGreaterThan(100);
        expect(report.operators).toHaveLength(3);
        for (const o of report.operators) {
          expect(BigInt(o.net)).toBeGreaterThan(0n);
          for (const g of o.by_gpu) expect(Number(g.effective_rate_per_hour)).toBeGreaterThan(0);
        }
        // Every operator was paid exactly what it earned, on chain.
        expect(report.payouts).toHaveLength(3);
        for (const p of report.payouts) expect(p).toMatchObject({ status: "confirmed", tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
        const net = report.operators.reduce((n: bigint, o: { net: string }) => n + BigInt(o.net), 0n);
        expect(report.payouts.reduce((n: bigint, p: { amount: string }) => n + BigInt(p.amount), 0n)).toBe(net);
        // Fees: 8% to the marketplace, 2% to the protocol (each rounded per record).
        const fee = (party: string) => BigInt(report.fees.find((f: { party: string }) => f.party === party).revenue);
        const gross = net + fee("marketplace") + fee("protocol");
        expect(Number(fee("marketplace")) / Number(gross)).toBeCloseTo(0.08, 3);
        expect(Number(fee("protocol")) / Number(gross)).toBeCloseTo(0.02, 3);
        // 3 payouts out and 3 customers' deposits in.
        expect(report.reconciliation.summary).toEqual({ matched: 6, missing_on_chain: 0, unexpected_on_chain: 0, amount_mismatch: 0, recipient_mismatch: 0 });
        // Hybrid settlement: a marketplace priced in USD; its customer paid TUSD, converted at the TUSD/USD feed.
        const h = report.hybrid;
        expect(h.deposit).toMatchObject({ paid_asset: "TUSD", paid: "1000000000", credited: "1000000000", rate: "1", rate_source: "feed" });
        // Three operators paid in USD-priced payouts, each part paid on chain at a feed's rate.
        type Part = { asset: string; bps: number; amount: string; rate: string; value_usd: string };
        type Payout = { operator: string; status: string; amount: string; parts: Part[] };
        expect(new Set(h.payouts.map((p: Payout) => p.operator))).toEqual(new Set(["berlin-gpu", "osaka-compute", "nairobi-ai"]));
        for (const p of h.payouts as Payout[]) {
          expect(p.status).toBe("converted");
          expect(p.parts.length).toBeGreaterThan(0);
          for (const c of p.parts)
            expect(c).toMatchObject({
              status: "confirmed",
              rate_source: "feed",
              tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
              rate_observed_at: expect.any(String),
            });
          // What the parts bought was worth at most the payout (a remainder below one unit stays with the operator).
          expect(p.parts.reduce((n, c) => n + BigInt(c.value_usd), 0n) <= BigInt(p.amount)).toBe(true);
        }
        const of = (operator: string) =>
          (h.payouts as Payout[]).filter((p) => p.operator === operator).map((p) => p.parts.map((c) => [c.asset, c.bps, c.rate]));
        expect(of("berlin-gpu")).toEqual([[["TUSD", 10_000, "1"]]]);
        expect(of("osaka-compute")).toEqual([[["ETH", 10_000, "0.000333333333333333"]]]); // 1 / 3000 ETH per USD
        // The 70/30 operator, paid before and after NET fell from 2.50 to 2.00 USD: 0.4, then 0.5 NET per USD.
        expect(of("nairobi-ai")).toEqual([
          [
            ["TUSD", 7000, "1"],
            ["NET", 3000, "0.4"],
          ],
          [
            ["TUSD", 7000, "1"],
            ["NET", 3000, "0.5"],
          ],
        ]);
        // The platform gave NET and ETH out (negative positions) and booked NET's fall as a gain.
        const position = (asset: string) => h.platform_position.find((p: { asset: string }) => p.asset === asset).position_display;
        expect(position("NET")).toMatch(/^-[0-9.]+$/);
        expect(position("ETH")).toMatch(/^-[0-9.]+$/);
        expect(h.fx_gains_losses_usd_display).toMatch(/^[0-9.]+$/);
        expect(h.fx_gains_losses_usd_display).not.toBe("0");
        for (const t of report.trial_balance) expect(t.balanced).toBe(true);
        expect(report.trial_balance.map((t: { asset: string }) => t.asset).sort()).toEqual(["ETH", "NET", "TUSD", "USD"]);
        expect(report.ledger_verified).toBe(true);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    260_000,
  );
});
