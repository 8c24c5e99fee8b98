import { describe, expect, it } from "vitest";
import { checkUsageLimits, defaultLimits, formatDecimal, rateFor } from "../../src/domain/usage-limits.js";
import { parseDecimal } from "../../src/domain/rating.js";

const at = (s: number) => new Date(Date.UTC(2026, 5, 15, 12) + s * 1000);
const check =
  (quantity: string, unit: string, seconds: number, gross = 1n, limits = defaultLimits(6)) =>
  () =>
    checkUsageLimits({ quantity: parseDecimal(quantity)!, unit, periodStart: at(0), periodEnd: at(seconds), gross }, limits, "USDC");

describe("usage limits (pure)", () => {
  it("time units allow 100,000 of the resource at once, exactly at the edge", () => {
    expect(check("100000", "gpu_second", 1)).not.toThrow();
    expect(check("100000.000000000000000001", "gpu_second", 1)).toThrow(/usage_limit_exceeded|more than the limit/);
    expect(check("100000", "gpu_hour", 3600)).not.toThrow();
    expect(check("100001", "gpu_hour", 3600)).toThrow(/at most 100000/);
    expect(check("1", "gpu_minute", 0)).toThrow(/in a period of 0 s/);
    expect(check("1" + "0".repeat(39), "token", 1)).not.toThrow(); // no default rate for other units
  });

  it("the gross of one record is capped at a million whole units by default, set per marketplace", () => {
    expect(check("1", "job", 1, 1_000_000_000_000n)).not.toThrow();
    expect(check("1", "job", 1, 1_000_000_000_001n)).toThrow(/exceeds the limit of 1000000000000 USDC/);
    const limits = defaultLimits(6);
    limits.maxQuantityPerSecond.set("token", parseDecimal("2.5")!);
    expect(rateFor(limits, "token")).toEqual({ num: 25n, den: 10n });
    expect(check("25", "token", 10, 1n, limits)).not.toThrow();
    expect(check("25.000001", "token", 10, 1n, limits)).toThrow(/2\.5 token per second/);
  });

  it("the default never passes the ceiling of 2^128 - 1 per record (an asset of 33 decimals or more)", () => {
    const ceiling = (1n << 128n) - 1n;
    expect(defaultLimits(32).maxGrossPerRecord).toBe(10n ** 38n);
    for (const scale of [33, 40, 77]) {
      expect(defaultLimits(scale).maxGrossPerRecord).toBe(ceiling);
      expect(check("1", "job", 1, ceiling + 1n, defaultLimits(scale))).toThrow(/exceeds the limit/);
    }
  });

  it("formats decimals without trailing zeros", () => {
    expect(formatDecimal({ digits: 27777777777777777777777n, exp: 18 })).toBe("27777.777777777777777777");
    expect(formatDecimal({ digits: 1500n, exp: 3 })).toBe("1.5");
    expect(formatDecimal({ digits: 5n, exp: 3 })).toBe("0.005");
    expect(formatDecimal({ digits: 7n, exp: 0 })).toBe("7");
  });
});
