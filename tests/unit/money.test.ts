import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { decimalToUnits, parseUnits, UINT256_MAX, unitsToDecimal } from "../../src/domain/money.js";

describe("money", () => {
  it("parses minimal non-negative integers up to uint256", () => {
    expect(parseUnits("0")).toBe(0n);
    expect(parseUnits("42")).toBe(42n);
    expect(parseUnits(UINT256_MAX.toString())).toBe(UINT256_MAX);
    for (const bad of ["", "-1", "042", "4.2", "1e3", " 1", "0x10", (UINT256_MAX + 1n).toString()]) {
      expect(parseUnits(bad), bad).toBeUndefined();
    }
  });

  it("converts display decimals to units without rounding", () => {
    expect(decimalToUnits("12.5", 6)).toBe(12_500_000n);
    expect(decimalToUnits("0.000001", 6)).toBe(1n);
    expect(decimalToUnits("0.0000001", 6)).toBeUndefined();
    expect(decimalToUnits("1.", 6)).toBeUndefined();
    expect(decimalToUnits("1", 0)).toBe(1n);
    expect(decimalToUnits("1.5", 0)).toBeUndefined();
  });

  it("round-trips units through their decimal form at any scale", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: UINT256_MAX }), fc.integer({ min: 0, max: 77 }), (units, scale) => {
        expect(decimalToUnits(unitsToDecimal(units, scale), scale)).toBe(units);
      }),
    );
  });
});
