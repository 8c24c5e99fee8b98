import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testClock } from "../support/clock.js";
import { expectStatus, testApi, type TestApi } from "../support/http.js";

/**
 * Where a correction lands (docs/usage.md): a reversal is effective when the usage it reverses was,
 * so every report that groups by effective time — fee revenue, operator earnings, the operator's
 * statement, the operator statements report, the trial balance as of an instant — gives the same
 * totals over any range, and they equal a model of the usage that was not reversed.
 */

const DAY = 86_400_000;
const HOUR = 3_600_000;
// Sixty days of usage ending ten days before the clock's day: wholly in the past, whatever the date.
const today = Math.floor(testClock.now().getTime() / DAY) * DAY;
const BASE = today - 70 * DAY;

let api: TestApi;
let mk: string;
let run = 0;

beforeAll(async () => {
  api = await testApi();
  expectStatus(await api.call("POST", "/v1/marketplaces", { body: { id: "mkt", name: "GPU market" } }), 201);
  expectStatus(
    await api.call("POST", "/v1/marketplaces/mkt/fee-schedules", {
      body: {
        effective_from: "2020-01-01T00:00:00Z",
        rules: [
          { party: "marketplace", bps: 1000 },
          { party: "protocol", bps: 150 },
        ],
      },
    }),
    201,
  );
  mk = expectStatus(await api.call("POST", "/v1/api-keys", { body: { name: "mkt", role: "marketplace", scope_id: "mkt" } }), 201).body.secret;
});
afterAll(async () => api?.close());

const recordArb = fc.record({
  operator: fc.integer({ min: 0, max: 1 }),
  day: fc.integer({ min: 0, max: 59 }),
  hour: fc.integer({ min: 0, max: 23 }), // hour 23 ends at midnight: on the next day's boundary
  quantity: fc.integer({ min: 1, max: 40 }),
  price: fc.constantFrom("0.5", "1.25", "2.49", "3", "0.000694"),
  reversed: fc.boolean(),
});
// A range of whole hours over the usage's days and a little beyond, from before to.
const rangeArb = fc
  .tuple(fc.integer({ min: -24, max: 62 * 24 }), fc.integer({ min: 1, max: 62 * 24 }))
  .map(([start, length]) => ({ from: BASE + start * HOUR, to: BASE + (start + length) * HOUR }));

type Posted = { net: bigint; fees: bigint; effectiveAt: number; operator: string; reversed: boolean };

const sum = (xs: bigint[]) => xs.reduce((a, b) => a + b, 0n);

describe("the reports agree on where a correction lands", () => {
  it("fee revenue, earnings, statements and the trial balance give the same totals over any range, after reversals", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(recordArb, { minLength: 1, maxLength: 10 }), fc.array(rangeArb, { minLength: 1, maxLength: 4 }), async (records, ranges) => {
        // Each run has an asset and operators of its own, so runs do not see each other's usage.
        const n = ++run;
        const asset = `PR${n}`;
        const assetId = expectStatus(await api.call("POST", "/v1/assets", { body: { code: asset, scale: 6, settlement: { kind: "offchain" } } }), 201).body
          .id as string;
        const operators = [`op-${n}-a`, `op-${n}-b`];
        for (const o of operators) expectStatus(await api.call("POST", "/v1/operators", { key: mk, body: { id: o, name: o } }), 201);
        const buyer = `buyer-${n}`;
        expectStatus(
          await api.call("POST", "/v1/customers", {
            key: mk,
            body: { id: buyer, billing: "postpaid", credit_limits: [{ asset, credit_limit: "1000000000000000000000000" }] },
          }),
          201,
        );

        const batch = expectStatus(
          await api.call("POST", "/v1/usage/batch", {
            key: mk,
            body: {
              records: records.map((r, i) => ({
                external_id: `r-${n}-${i}`,
                operator_id: operators[r.operator],
                customer_id: buyer,
                resource: "gpu:h100",
                unit: "gpu_hour",
                quantity: String(r.quantity),
                unit_price: r.price,
                asset,
                period_start: new Date(BASE + r.day * DAY + r.hour * HOUR).toISOString(),
                period_end: new Date(BASE + r.day * DAY + (r.hour + 1) * HOUR).toISOString(),
              })),
              results: "full",
            },
          }),
          200,
        ).body;
        const posted: Posted[] = [];
        for (const [i, result] of (
          batch.results as { status: string; record?: { id: string; net: string; fees: { amount: string }[]; effective_at: string } }[]
        ).entries()) {
          if (result.status !== "accepted") throw new Error(`record ${i} was not accepted: ${JSON.stringify(result)}`);
          const rec = result.record!;
          if (records[i]!.reversed) expectStatus(await api.call("POST", `/v1/usage/${rec.id}/reverse`, { key: mk, body: { reason: "meter fault" } }), 201);
          posted.push({
            net: BigInt(rec.net),
            fees: sum(rec.fees.map((f) => BigInt(f.amount))),
            effectiveAt: Date.parse(rec.effective_at),
            operator: operators[records[i]!.operator]!,
            reversed: records[i]!.reversed,
          });
        }

        for (const { from, to } of ranges) {
          const q = `from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}`;
          const live = posted.filter((p) => !p.reversed);
          const inRange = live.filter((p) => p.effectiveAt >= from && p.effectiveAt < to);
          const context = `range ${new Date(from).toISOString()} .. ${new Date(to).toISOString()}`;

          // Fee revenue: every party's fee accounts in this asset.
          const fees = expectStatus(await api.call("GET", `/v1/reports/fee-revenue?${q}&group_by=day`), 200).body.data as { asset: string; revenue: string }[];
          const feeRevenue = sum(fees.filter((f) => f.asset === asset).map((f) => BigInt(f.revenue)));
          expect(feeRevenue, context).toBe(sum(inRange.map((p) => p.fees)));

          const report = expectStatus(await api.call("GET", `/v1/reports/operator-statements?${q}&asset=${asset}`), 200).body.data as {
            operator_id: string;
            opening: string;
            credits: string;
            debits: string;
            closing: string;
          }[];
          const asOf = expectStatus(await api.call("GET", `/v1/reports/trial-balance?as_of=${new Date(to - 1).toISOString()}&asset=${asset}`), 200).body;
          let earnedFees = 0n;
          for (const o of operators) {
            const mine = inRange.filter((p) => p.operator === o);
            const net = sum(mine.map((p) => p.net));
            const before = sum(live.filter((p) => p.operator === o && p.effectiveAt < from).map((p) => p.net));
            const upTo = sum(live.filter((p) => p.operator === o && p.effectiveAt < to).map((p) => p.net));

            const earnings = expectStatus(await api.call("GET", `/v1/operators/${o}/earnings?${q}&group_by=day`), 200).body.data as {
              asset: string;
              fees: string;
              net: string;
            }[];
            const theirs = earnings.filter((e) => e.asset === asset);
            expect(sum(theirs.map((e) => BigInt(e.net))), `${context}: ${o} earnings`).toBe(net);
            earnedFees += sum(theirs.map((e) => BigInt(e.fees)));

            const statement = expectStatus(await api.call("GET", `/v1/operators/${o}/statement?${q}&asset_id=${assetId}`), 200).body;
            const lines = statement.data as { amount: string; balance_after: string; effective_at: string }[];
            expect(
              lines.map((l) => l.effective_at),
              `${context}: ${o} effective order`,
            ).toEqual([...lines.map((l) => l.effective_at)].sort());
            const opening = BigInt((statement.opening as { asset_id: string; balance: string }[]).find((x) => x.asset_id === assetId)?.balance ?? "0");
            expect(opening, `${context}: ${o} statement opening`).toBe(before);
            expect(sum(lines.map((l) => BigInt(l.amount))), `${context}: ${o} statement`).toBe(net);
            // Every line's running balance is the opening plus the lines up to it, in effective order.
            let running = opening;
            for (const l of lines) {
              running += BigInt(l.amount);
              expect(BigInt(l.balance_after), `${context}: ${o} running balance`).toBe(running);
            }
            expect(running, `${context}: ${o} closing`).toBe(upTo);

            // An operator without usage in this asset has no payable in it, and no row.
            const row = report.find((r) => r.operator_id === o) ?? { opening: "0", credits: "0", debits: "0", closing: "0" };
            expect(BigInt(row.opening), `${context}: ${o} report opening`).toBe(before);
            expect(BigInt(row.credits) - BigInt(row.debits), `${context}: ${o} report movement`).toBe(net);
            expect(BigInt(row.closing), `${context}: ${o} report closing`).toBe(upTo);

            const payable = (asOf.accounts as { ref: string; balance: string }[]).find((a) => a.ref === `operator:${o}:payable`);
            expect(BigInt(payable?.balance ?? "0"), `${context}: ${o} trial balance as of the range's end`).toBe(upTo);
          }
          expect(earnedFees, `${context}: earnings' fees`).toBe(feeRevenue);
          for (const t of asOf.totals as { balanced: boolean }[]) expect(t.balanced, context).toBe(true);
        }
      }),
      { numRuns: 20 },
    );
  });
});
