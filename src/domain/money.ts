/**
 * Money is an exact integer count of an asset's smallest unit. It is a bigint in code, numeric(78,0)
 * in the database and a decimal string on the wire; a JavaScript number never holds it.
 */
export const UINT256_MAX = (1n << 256n) - 1n;

const INTEGER = /^(0|[1-9][0-9]*)$/;

/** A positive amount that fits in uint256 (what every transfer leg carries). */
export function isTransferAmount(value: bigint): boolean {
  return value > 0n && value <= UINT256_MAX;
}

/** Parses a non-negative integer string in minimal form ("0", "42"; not "042", "4.2", "-1", "1e3"). */
export function parseUnits(text: string): bigint | undefined {
  if (text.length > 78 || !INTEGER.test(text)) return undefined;
  const value = BigInt(text);
  return value <= UINT256_MAX ? value : undefined;
}

/**
 * Converts a decimal string in display units ("12.5") to the smallest unit at `scale`
 * ("12500000" for scale 6). Rejects more fractional digits than the scale allows instead of rounding.
 */
export function decimalToUnits(text: string, scale: number): bigint | undefined {
  const match = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/.exec(text);
  if (!match) return undefined;
  const whole = match[1] ?? "0";
  const fraction = match[2] ?? "";
  if (fraction.length > scale) return undefined;
  const value = BigInt(whole + fraction.padEnd(scale, "0"));
  return value <= UINT256_MAX ? value : undefined;
}

/** Formats smallest units as a decimal string in display units, without trailing zeros. */
export function unitsToDecimal(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, "0");
  const whole = digits.slice(0, digits.length - scale);
  const fraction = digits.slice(digits.length - scale).replace(/0+$/, "");
  return (negative ? "-" : "") + whole + (fraction ? "." + fraction : "");
}
