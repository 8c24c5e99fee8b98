import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  convertAmount,
  deviationBps,
  formatRate,
  invertRate,
  parseRate,
  rateFromFeed,
  revaluationDelta,
  splitByBps,
  valueOf,
  type Rate,
} from "../../src/domain/conversion.js";
import { LedgerError } from "../../src/domain/errors.js";

const RUNS = { numRuns: 300 };

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a < 0n ? -a : a;
}
const reduce = (num: bigint, den: bigint): Rate => ({ num: num / gcd(num, den), den: den / gcd(num, den) });
/** Smallest-unit ratio, computed here independently: one source unit is worth n / d target units. */
const ratio = (fromScale: number, toScale: number, r: Rate) => ({ n: r.num * 10n ** BigInt(toScale), d: r.den * 10n ** BigInt(fromScale) });

const amountArb = fc.bigInt({ min: 0n, max: 2n ** 128n });
const signedArb = fc.bigInt({ min: -(2n ** 128n), max: 2n ** 128n });
const scaleArb = fc.oneof(fc.constantFrom(0, 2, 6, 8, 18), fc.integer({ min: 0, max: 24 }));
const rateArb = fc.tuple(fc.bigInt({ min: 1n, max: 10n ** 24n }), fc.bigInt({ min: 1n, max: 10n ** 24n })).map(([n, d]) => reduce(n, d));
/** 1..5 positive basis points summing to 10,000: the gaps between distinct cut points in 1..9,999. */
const bpsArb = fc
  .integer({ min: 1, max: 5 })
  .chain((parts) => fc.uniqueArray(fc.integer({ min: 1, max: 9_999 }), { minLength: parts - 1, maxLength: parts - 1 }))
  .map((cuts) => {
    const points = [0, ...[...cuts].sort((a, b) => a - b), 10_000];
    return points.slice(1).map((p, i) => p - points[i]!);
  });

describe("rates", () => {
  it("parseRate is exact and reduced; formatRate gives back a rate parseRate reads as the same", () => {
    const decimal = fc
      .tuple(fc.bigInt({ min: 0n, max: 10n ** 24n }), fc.integer({ min: 0, max: 18 }))
      .filter(([digits]) => digits > 0n)
      .map(([digits, decimals]) => {
        const s = digits.toString().padStart(decimals + 1, "0");
        return decimals === 0 ? s : `${s.slice(0, -decimals)}.${s.slice(-decimals)}`;
      });
    fc.assert(
      fc.property(decimal, (text) => {
        const r = parseRate(text);
        const [whole, fraction = ""] = text.split(".");
        expect(r.num * 10n ** BigInt(fraction.length)).toBe(BigInt(whole! + fraction) * r.den);
        expect(gcd(r.num, r.den)).toBe(1n);
        expect(parseRate(formatRate(r))).toEqual(r);
      }),
      RUNS,
    );
  });

  it("rateFromFeed is answer / 10^decimals, reduced; invertRate swaps it", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 2n ** 255n }), fc.integer({ min: 0, max: 36 }), (answer, decimals) => {
        const r = rateFromFeed(answer, decimals);
        expect(r.num * 10n ** BigInt(decimals)).toBe(answer * r.den);
        expect(gcd(r.num, r.den)).toBe(1n);
        expect(invertRate(invertRate(r))).toEqual(r);
        expect(invertRate(r)).toEqual({ num: r.den, den: r.num });
      }),
      RUNS,
    );
  });

  it("formatRate is within half a unit of the last decimal, rounding half up", () => {
    fc.assert(
      fc.property(rateArb, fc.integer({ min: 0, max: 24 }), (r, maxDecimals) => {
        const text = formatRate(r, maxDecimals);
        expect(text).toMatch(/^(0|[1-9]\d*)(\.\d*[1-9])?$/);
        const [whole, fraction = ""] = text.split(".");
        const shown = BigInt(whole! + fraction.padEnd(maxDecimals, "0")); // in units of 10^-maxDecimals
        const exact2 = (2n * r.num * 10n ** BigInt(maxDecimals)) / r.den; // floor(2 × exact)
        // half-up: shown = floor(exact + 1/2) ⇔ shown ≤ exact + 1/2 < shown + 1
        expect(shown).toBe((exact2 + 1n) / 2n);
      }),
      RUNS,
    );
  });

  it("deviationBps is symmetric, 0 for equal rates, 100 for a rate 1% above, and the bound rounded up", () => {
    fc.assert(
      fc.property(rateArb, rateArb, (a, b) => {
        const dev = deviationBps(a, b);
        expect(deviationBps(b, a)).toBe(dev);
        expect(deviationBps(a, a)).toBe(0n);
        expect(deviationBps(a, reduce(a.num * 101n, a.den * 100n))).toBe(100n);
        const [x, y] = [a.num * b.den, b.num * a.den];
        const diff = x > y ? x - y : y - x;
        const min = x < y ? x : y;
        expect(diff * 10_000n <= dev * min).toBe(true);
        expect((dev - 1n) * min < diff * 10_000n || dev === 0n).toBe(true);
      }),
      RUNS,
    );
  });
});

describe("splitByBps", () => {
  it("parts sum to the amount, are ≥ 0, and each is within (number of parts) units of its exact share", () => {
    fc.assert(
      fc.property(amountArb, bpsArb, (amount, bps) => {
        const parts = splitByBps(amount, bps);
        expect(parts).toHaveLength(bps.length);
        expect(parts.reduce((s, p) => s + p, 0n)).toBe(amount);
        parts.forEach((p, i) => {
          expect(p >= 0n).toBe(true);
          const off = p * 10_000n - amount * BigInt(bps[i]!); // (part − exact share) × 10^4
          expect((off < 0n ? -off : off) < BigInt(bps.length) * 10_000n).toBe(true);
          if (i > 0) expect(p).toBe((amount * BigInt(bps[i]!)) / 10_000n);
        });
      }),
      RUNS,
    );
  });
});

describe("convertAmount", () => {
  it("to is the most the amount buys, used the least that pays for it, and the remainder goes back", () => {
    fc.assert(
      fc.property(amountArb, scaleArb, scaleArb, rateArb, (amount, fromScale, toScale, rate) => {
        const { to, used, remainder } = convertAmount(amount, fromScale, toScale, rate);
        const { n, d } = ratio(fromScale, toScale, rate);
        expect(used + remainder).toBe(amount);
        expect(used >= 0n && used <= amount).toBe(true);
        expect(to >= 0n).toBe(true);
        expect(to * d <= used * n).toBe(true); // `to` is worth no more than `used`
        if (used > 0n) expect((used - 1n) * n < to * d).toBe(true); // one unit less would not pay for `to`
        expect((to + 1n) * d > amount * n).toBe(true); // one target unit more would cost more than `amount`
        expect(convertAmount(to, toScale, fromScale, invertRate(rate)).to <= used).toBe(true);
      }),
      RUNS,
    );
  });

  it("split-and-convert between 6- and 18-decimal assets creates and loses nothing", () => {
    const scales = fc.constantFrom<[number, number]>([6, 18], [18, 6], [6, 6], [18, 18]);
    fc.assert(
      fc.property(amountArb, bpsArb, scales, rateArb, (amount, bps, [fromScale, toScale], rate) => {
        const { n, d } = ratio(fromScale, toScale, rate);
        const results = splitByBps(amount, bps).map((part) => convertAmount(part, fromScale, toScale, rate));
        const used = results.reduce((s, r) => s + r.used, 0n);
        const remainder = results.reduce((s, r) => s + r.remainder, 0n);
        expect(used + remainder).toBe(amount);
        expect(results.reduce((s, r) => s + r.to, 0n) * d <= used * n).toBe(true);
      }),
      RUNS,
    );
  });
});

describe("valueOf", () => {
  it("is odd, monotonic, and equals convertAmount's `to` for amounts ≥ 0", () => {
    fc.assert(
      fc.property(signedArb, signedArb, scaleArb, scaleArb, rateArb, (x, y, fromScale, toScale, rate) => {
        const v = (a: bigint) => valueOf(a, fromScale, toScale, rate);
        expect(v(-x)).toBe(-v(x));
        const [lo, hi] = x <= y ? [x, y] : [y, x];
        expect(v(lo) <= v(hi)).toBe(true);
        if (x >= 0n) expect(v(x)).toBe(convertAmount(x, fromScale, toScale, rate).to);
      }),
      RUNS,
    );
  });
});

describe("revaluationDelta", () => {
  it("is within one unit of 0 right after a conversion either way at the same rate", () => {
    fc.assert(
      fc.property(amountArb, scaleArb, scaleArb, rateArb, (amount, xScale, pScale, rate) => {
        // The platform gives out X for `amount` of P: position −to in X, book +used in P.
        const sell = convertAmount(amount, pScale, xScale, invertRate(rate));
        const d1 = revaluationDelta(-sell.to, xScale, sell.used, pScale, rate);
        expect(d1 >= -1n && d1 <= 1n).toBe(true);
        // The platform takes `amount` of X and pays out P: position +used in X, book −to in P.
        const buy = convertAmount(amount, xScale, pScale, rate);
        expect(revaluationDelta(buy.used, xScale, -buy.to, pScale, rate)).toBe(0n);
      }),
      RUNS,
    );
  });

  it("grows when the rate of X rises for a negative position, and is positive once the rise is worth 2 units", () => {
    const rise = fc.tuple(fc.bigInt({ min: 1n, max: 10n ** 6n }), fc.bigInt({ min: 1n, max: 10n ** 6n }));
    fc.assert(
      fc.property(amountArb, scaleArb, scaleArb, rateArb, rise, (amount, xScale, pScale, rate, [m, j]) => {
        const sell = convertAmount(amount, pScale, xScale, invertRate(rate));
        const higher = reduce(rate.num * (m + j), rate.den * m);
        const before = revaluationDelta(-sell.to, xScale, sell.used, pScale, rate);
        const after = revaluationDelta(-sell.to, xScale, sell.used, pScale, higher);
        expect(after >= before).toBe(true);
        const r1 = ratio(xScale, pScale, rate);
        const r2 = ratio(xScale, pScale, higher);
        // worth at `higher` − worth at `rate` ≥ 2 smallest P units ⇒ a loss to book
        if (sell.to * (r2.n * r1.d - r1.n * r2.d) >= 2n * r1.d * r2.d) expect(after > 0n).toBe(true);
      }),
      RUNS,
    );
  });
});

describe("examples", () => {
  it("1,234.567891 USD (scale 6) at 2.5 USD per NET buys 493.8271564 NET (scale 18)", () => {
    const usdPerNet = parseRate("2.5");
    expect(usdPerNet).toEqual({ num: 5n, den: 2n });
    const netPerUsd = invertRate(usdPerNet);
    expect(netPerUsd).toEqual({ num: 2n, den: 5n });
    // 1234567891 × 2 × 10^18 / (5 × 10^6) = 2469135782 × 10^12 / 5 = 493827156.4 × 10^12
    expect(convertAmount(1_234_567_891n, 6, 18, netPerUsd)).toEqual({ to: 493_827_156_400_000_000_000n, used: 1_234_567_891n, remainder: 0n });
    expect(valueOf(493_827_156_400_000_000_000n, 18, 6, usdPerNet)).toBe(1_234_567_891n);
  });

  it("10.00 USD at 3 USD per X buys 3 whole X for 9.00 USD and gives 1.00 USD back", () => {
    expect(convertAmount(1_000n, 2, 0, invertRate(parseRate("3")))).toEqual({ to: 3n, used: 900n, remainder: 100n });
    expect(convertAmount(1n, 6, 0, { num: 2n, den: 5n })).toEqual({ to: 0n, used: 0n, remainder: 1n });
    expect(valueOf(-7n, 0, 0, { num: 1n, den: 2n })).toBe(-3n);
  });

  it("parses, reads feeds and formats", () => {
    expect(parseRate("0.0400")).toEqual({ num: 1n, den: 25n });
    expect(rateFromFeed(250_012_345_678n, 8)).toEqual({ num: 125_006_172_839n, den: 50_000_000n });
    expect(formatRate({ num: 5n, den: 2n })).toBe("2.5");
    expect(formatRate({ num: 1n, den: 3n })).toBe("0.333333333333333333");
    expect(formatRate({ num: 2n, den: 3n })).toBe("0.666666666666666667");
    expect(formatRate({ num: 999n, den: 1000n }, 2)).toBe("1");
    expect(formatRate({ num: 5n, den: 2n }, 0)).toBe("3");
    expect(formatRate({ num: 1n, den: 10n ** 20n })).toBe("0");
  });

  it("refuses what is not a positive rate", () => {
    for (const bad of ["0", "0.000", "-1", "1e3", "2,5", ".5", "5.", "", "1".repeat(31), "1." + "1".repeat(31)]) {
      expect(() => parseRate(bad, "legs.0.rate")).toThrow(LedgerError);
      try {
        parseRate(bad, "legs.0.rate");
      } catch (e) {
        expect((e as LedgerError).code).toBe("invalid_request");
        expect((e as LedgerError).issues).toEqual([{ path: "legs.0.rate", message: expect.stringContaining("positive decimal number such as 2.5") }]);
      }
    }
    expect(() => rateFromFeed(0n, 8)).toThrow(LedgerError);
    expect(() => rateFromFeed(-5n, 8)).toThrow(LedgerError);
  });

  it("splits by basis points, the leftover to the first part", () => {
    expect(splitByBps(10n, [3333, 3333, 3334])).toEqual([4n, 3n, 3n]);
    expect(splitByBps(0n, [5000, 5000])).toEqual([0n, 0n]);
    expect(splitByBps(7n, [10_000])).toEqual([7n]);
    expect(() => splitByBps(10n, [5000, 4999])).toThrow(Error);
    expect(() => splitByBps(10n, [0, 10_000])).toThrow(Error);
    expect(() => splitByBps(10n, [])).toThrow(Error);
  });

  it("measures deviation and revaluation", () => {
    expect(deviationBps(parseRate("100"), parseRate("101"))).toBe(100n);
    expect(deviationBps(parseRate("100.5"), parseRate("100"))).toBe(50n);
    expect(deviationBps(parseRate("3"), parseRate("3.0001"))).toBe(1n); // 0.33 bps, rounded up
    // Gave out 2 X (scale 0) for 5.00 USD (scale 2) at 2.5; X rises to 3: the book is short 1.00 USD.
    expect(revaluationDelta(-2n, 0, 500n, 2, parseRate("2.5"))).toBe(0n);
    expect(revaluationDelta(-2n, 0, 500n, 2, parseRate("3"))).toBe(100n);
    expect(revaluationDelta(-2n, 0, 500n, 2, parseRate("2"))).toBe(-100n);
  });
});
