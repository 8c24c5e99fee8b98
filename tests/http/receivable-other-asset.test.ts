import { describe, expect, it } from "vitest";
import { Settlements } from "../../src/chain/settlement.js";
import { createLogger } from "../../src/log.js";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { PayoutWorker } from "../../src/workers/payout-worker.js";
import { expectStatus, worldPerFile } from "../support/http.js";

/**
 * No payout in any asset while the operator owes the platform (docs/ledger.md, "Clawbacks"): an
 * operator whose USD earnings were converted into EUR, then clawed back by an upheld dispute (a
 * USD receivable), is not paid the EUR its USD became until the USD debt is recovered.
 */
const t = worldPerFile();

describe("a receivable in one asset and a payable in another", () => {
  it("an operator that owes USD is not paid the EUR its USD became, until its USD earnings pay the debt", async () => {
    const { api, w } = t;
    for (const [code, scale] of [
      ["USD", 6],
      ["EUR", 2],
    ] as const)
      expectStatus(await api.call("POST", "/v1/assets", { body: { code, scale, settlement: { kind: "offchain" } } }), 201);
    const rate = expectStatus(await api.call("POST", "/v1/rates", { key: w.keys.finance, body: { base: "USD", quote: "EUR", value: "0.9" } }), 202).body;
    expectStatus(await api.call("POST", `/v1/proposals/${rate.id}/approve`, { key: w.keys.admin, body: {} }), 200);
    // m1's customer c1 pays 100 USD, and the money is received (a second key approves the receipt).
    expectStatus(await api.call("POST", "/v1/customers/c1/deposits", { key: w.keys.m1, body: { asset: "USD", amount: "100000000" } }), 201);
    const receipt = expectStatus(
      await api.call("POST", "/v1/marketplaces/m1/receipts", { key: w.keys.finance, body: { asset: "USD", amount: "100000000", reference: "usd m1" } }),
      201,
    ).body;
    expectStatus(await api.call("POST", `/v1/proposals/${receipt.id}/approve`, { key: w.keys.admin, body: {} }), 200);
    const usage = expectStatus(await api.call("POST", "/v1/usage", { key: w.keys.m1, body: w.usage("other-asset-1", { asset: "USD" }) }), 201).body;
    const balance = async (asset: string) =>
      (expectStatus(await api.call("GET", "/v1/operators/o1/balances", { key: w.keys.o1 }), 200).body.data as Array<Record<string, string>>).find(
        (b) => b.asset === asset,
      )!;
    const payableUsd = BigInt((await balance("USD")).payable_now!);
    expect(payableUsd).toBeGreaterThan(0n);

    // o1 is paid in EUR: its USD payout is converted; it cancels the EUR part, which goes back to its EUR payable.
    expectStatus(await api.call("PUT", "/v1/operators/o1/payout-preferences/USD", { key: w.keys.o1, body: { splits: [{ asset: "EUR", bps: 10_000 }] } }), 200);
    const parent = expectStatus(await api.call("POST", "/v1/payouts", { key: w.keys.o1, body: { asset: "USD", amount: payableUsd.toString() } }), 201).body;
    expect(await new PayoutWorker(api.db, new Settlements([]), { log: createLogger("silent") }).convert()).toBe(1);
    const part = expectStatus(await api.call("GET", `/v1/conversions?payout_id=${parent.id}`, { key: w.keys.finance }), 200).body.data[0];
    expectStatus(await api.call("POST", `/v1/payouts/${part.child_payout_id}/cancel`, { key: w.keys.o1 }), 200);
    const eur = await balance("EUR");
    expect(BigInt(eur.available!)).toBeGreaterThan(0n);
    expect(eur.payable_now).toBe(eur.available);

    // The record is disputed and upheld: o1 owes the USD it was paid in EUR.
    const dispute = expectStatus(await api.call("POST", "/v1/disputes", { key: w.keys.m1, body: { usage_ids: [usage.id], reason: "job failed" } }), 201).body;
    expectStatus(await api.call("POST", `/v1/disputes/${dispute.id}/uphold`, { key: w.keys.finance, body: {} }), 200);
    expect(BigInt((await balance("USD")).receivable!)).toBeGreaterThan(0n);
    // Nothing is payable in EUR while it owes USD, and a payout is refused, naming the debt.
    expect((await balance("EUR")).payable_now).toBe("0");
    const refused = await api.call("POST", "/v1/payouts", { key: w.keys.o1, body: { asset: "EUR", amount: eur.available } });
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe("payout_withheld");
    expect(refused.body.detail).toMatch(/owes [0-9.]+ USD to the platform .*nothing is paid in any asset while it owes/);
    for (const key of [w.keys.finance, w.keys.admin]) {
      const r = await api.call("POST", "/v1/payouts", { key, body: { operator_id: "o1", asset: "EUR", amount: "1" } });
      expect(r.status).toBe(422);
      expect(r.body.code).toBe("payout_withheld");
    }
    expect(await api.db.query("select 1 from payouts p join assets s on s.id = p.asset_id where s.code = 'EUR' and p.status = 'pending'")).toEqual([]);

    // New USD earnings, funded, pay the debt back; then the EUR is payable again.
    for (let i = 0; i < 3; i++)
      expectStatus(await api.call("POST", "/v1/usage", { key: w.keys.m1, body: w.usage(`other-asset-repay-${i}`, { asset: "USD" }) }), 201);
    expect((await balance("USD")).receivable).toBe("0");
    expect((await balance("EUR")).payable_now).toBe(eur.available);
    expectStatus(await api.call("POST", "/v1/payouts", { key: w.keys.o1, body: { asset: "EUR", amount: eur.available } }), 201);
    expect((await verifyLedger(api.db)).violations).toEqual([]);
  });
});
