import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { UINT256_MAX } from "../../src/domain/money.js";
import { grossFromPrice, parseDecimal, resolveRule, splitGross, type FeeRule } from "../../src/domain/rating.js";

const ruleArb: fc.Arbitrary<FeeRule> = fc.record({
  party: fc.constantFrom("marketplace", "protocol", "referrer"),
  bps: fc.integer({ min: 0, max: 10_000 }),
  fixed: fc.bigInt({ min: 0n, max: 10n ** 9n }),
  min: fc.bigInt({ min: 0n, max: 10n ** 9n }),
  max: fc.option(fc.bigInt({ min: 0n, max: 10n ** 12n }), { nil: null }),
});

describe("fee splits", () => {
  it("net + fees = gross exactly, every part ≥ 0, and each fee follows the documented rule", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: UINT256_MAX }), fc.array(ruleArb, { maxLength: 4 }), (gross, rules) => {
        const split = splitGross(gross, rules);
        expect(split.net + split.fees.reduce((s, f) => s + f.amount, 0n)).toBe(gross);
        expect(split.net >= 0n).toBe(true);
        let left = gross;
        split.fees.forEach((f, i) => {
          const r = rules[i]!;
          let expected = (gross * BigInt(r.bps)) / 10_000n + r.fixed;
          if (expected < r.min) expected = r.min;
          if (r.max !== null && expected > r.max) expected = r.max;
          expect(f.amount).toBe(expected < left ? expected : left); // capped only by what is left
          expect(f.amount >= 0n).toBe(true);
          left -= f.amount;
        });
      }),
      { numRuns: 2000 },
    );
  });

  it("rounding never moves more than one unit per fee away from the exact share", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.integer({ min: 0, max: 10_000 }), (gross, bps) => {
        const [fee] = splitGross(gross, [{ party: "p", bps, fixed: 0n, min: 0n, max: null }]).fees;
        // exact share = gross × bps / 10^4; the fee is its floor: 0 ≤ exact − fee < 1
        const exactTimes1e4 = gross * BigInt(bps);
        expect(exactTimes1e4 - fee!.amount * 10_000n >= 0n).toBe(true);
        expect(exactTimes1e4 - fee!.amount * 10_000n < 10_000n).toBe(true);
      }),
    );
  });
});

describe("gross from quantity × price", () => {
  const decimalText = fc.tuple(fc.bigInt({ min: 0n, max: 10n ** 15n }), fc.integer({ min: 0, max: 18 })).map(([digits, exp]) => {
    const s = digits.toString().padStart(exp + 1, "0");
    return exp === 0 ? s : `${s.slice(0, -exp)}.${s.slice(-exp)}`;
  });

  it("is the exact product rounded down to the smallest unit", () => {
    fc.assert(
      fc.property(decimalText, decimalText, fc.integer({ min: 0, max: 30 }), (q, p, scale) => {
        const quantity = parseDecimal(q)!;
        const price = parseDecimal(p)!;
        const gross = grossFromPrice(quantity, price, scale);
        // gross ≤ exact < gross + 1, compared over a common denominator
        const denominator = 10n ** BigInt(quantity.exp + price.exp);
        const exact = quantity.digits * price.digits * 10n ** BigInt(scale);
        expect(gross * denominator <= exact).toBe(true);
        expect(exact < (gross + 1n) * denominator).toBe(true);
      }),
    );
  });

  it("parses decimals strictly", () => {
    expect(parseDecimal("3600")).toEqual({ digits: 3600n, exp: 0 });
    expect(parseDecimal("0.000694")).toEqual({ digits: 694n, exp: 6 });
    for (const bad of ["", "-1", "1e3", ".5", "5.", "01", "1." + "0".repeat(19), "1".repeat(41), " 1"]) expect(parseDecimal(bad), bad).toBeUndefined();
    // 1 hour of an H100 at 2.49 USDC/hour, USDC has 6 decimals
    expect(grossFromPrice(parseDecimal("1")!, parseDecimal("2.49")!, 6)).toBe(2_490_000n);
    // 3,601 GPU-seconds at 0.000694 USDC/s = 2.499094 USDC
    expect(grossFromPrice(parseDecimal("3601")!, parseDecimal("0.000694")!, 6)).toBe(2_499_094n);
    expect(grossFromPrice(parseDecimal("0.5")!, parseDecimal("0.000001")!, 6)).toBe(0n);
  });
});

describe("fee rule overrides", () => {
  const rule = {
    party: "marketplace",
    bps: 1000,
    fixed: { USDC: "100" },
    overrides: [
      { resource: "gpu:*", bps: 800 },
      { resource: "gpu:h100*", bps: 700 },
      { operatorId: "op-big", bps: 500 },
      { operatorId: "op-big", resource: "gpu:h100-80gb", bps: 300, fixed: { USDC: "0" } },
    ],
  };
  const r = (resource: string, operatorId = "op", assetCode = "USDC") => resolveRule(rule, { resource, operatorId, assetCode });
  it("picks the most specific override", () => {
    expect(r("cpu:epyc")).toMatchObject({ bps: 1000, fixed: 100n });
    expect(r("gpu:a100")).toMatchObject({ bps: 800, fixed: 100n });
    expect(r("gpu:h100-80gb")).toMatchObject({ bps: 700 });
    expect(r("cpu:epyc", "op-big")).toMatchObject({ bps: 500 });
    expect(r("gpu:h100-80gb", "op-big")).toMatchObject({ bps: 300, fixed: 0n });
    expect(r("cpu:epyc", "op", "EURC")).toMatchObject({ fixed: 0n, min: 0n, max: null });
  });

  it("an exact resource wins over a pattern that also matches it, whatever their order and lengths", () => {
    const of = (overrides: { resource: string; bps: number }[], resource: string) =>
      resolveRule({ party: "marketplace", bps: 1000, overrides }, { resource, operatorId: "op", assetCode: "USDC" }).bps;
    const exact = { resource: "gpu:h100", bps: 500 };
    const pattern = { resource: "gpu:h100*", bps: 800 };
    expect(of([exact, pattern], "gpu:h100")).toBe(500);
    expect(of([pattern, exact], "gpu:h100")).toBe(500);
    expect(of([pattern, { resource: "gpu:h1000", bps: 500 }], "gpu:h1000")).toBe(500);
    // Among patterns, the longer prefix.
    expect(of([{ resource: "gpu:*", bps: 900 }, pattern], "gpu:h100-80gb")).toBe(800);
  });
});

describe("fee schedule input", () => {
  it("refuses amounts past uint256 and min above max", async () => {
    const { FeeScheduleInput } = await import("../../src/services/fee-schedules.js");
    const rule = (extra: object) => ({ marketplaceId: "m", effectiveFrom: new Date(), rules: [{ party: "marketplace", bps: 1, ...extra }] });
    expect(FeeScheduleInput.safeParse(rule({ fixed: { USDC: (1n << 256n).toString() } })).success).toBe(false);
    expect(FeeScheduleInput.safeParse(rule({ fixed: { USDC: ((1n << 256n) - 1n).toString() } })).success).toBe(true);
    expect(FeeScheduleInput.safeParse(rule({ min: { USDC: "5" }, max: { USDC: "4" } })).success).toBe(false);
    expect(FeeScheduleInput.safeParse(rule({ fixed: { USDC: "01" } })).success).toBe(false);
  });
});
