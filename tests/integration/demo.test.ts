import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

describe("npm run demo", () => {
  it("runs end to end: usage, payouts on chain, reconciliation, a balanced trial balance; and stops what it started", () => {
    const dir = mkdtempSync(join(tmpdir(), "demo-test-"));
    try {
      const file = join(dir, "report.json");
      const run = spawnSync("npm", ["run", "--silent", "demo", "--", "--json", file], {
        cwd: join(import.meta.dirname, "..", ".."),
        encoding: "utf8",
        timeout: 150_000,
        env: { ...process.env, TEST_DATABASE_URL: "" },
      });
      expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
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
      for (const t of report.trial_balance) expect(t.balanced).toBe(true);
      expect(report.ledger_verified).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
