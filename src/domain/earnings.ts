import { unitsToDecimal } from "./money.js";

/**
 * Seconds in one unit, for units that measure time; other units have no paid hours. Without a
 * prototype, so that a unit named like an Object property ("constructor", a valid unit name) is
 * not a time unit.
 */
export const SECONDS_PER_UNIT: Readonly<Record<string, bigint>> = Object.assign(Object.create(null) as Record<string, bigint>, {
  gpu_second: 1n,
  gpu_minute: 60n,
  gpu_hour: 3600n,
  cpu_second: 1n,
  cpu_minute: 60n,
  cpu_hour: 3600n,
  second: 1n,
  minute: 60n,
  hour: 3600n,
});

/** An exact non-negative decimal string as digits / 10^exp (any length). */
function decimal(text: string): { digits: bigint; exp: number } {
  const [whole, fraction = ""] = text.split(".");
  return { digits: BigInt(whole! + fraction), exp: fraction.length };
}

/** Paid hours of a quantity in a time unit, as a decimal string with 6 decimals (rounded down), or null. */
export function paidHours(quantity: string, unit: string): string | null {
  const perUnit = SECONDS_PER_UNIT[unit];
  if (perUnit === undefined) return null;
  const q = decimal(quantity);
  const microHours = (q.digits * perUnit * 1_000_000n) / (3600n * 10n ** BigInt(q.exp));
  return unitsToDecimal(microHours, 6);
}

/**
 * What the operator actually realised per hour (or per unit), in the asset's smallest units: net
 * divided by paid hours (or quantity), rounded down. Null when there is nothing to divide by.
 */
export function effectiveRateUnits(net: bigint, quantity: string, unit: string, per: "hour" | "unit"): bigint | null {
  const q = decimal(quantity);
  let denominatorNum = q.digits; // quantity = digits / 10^exp
  let denominatorDen = 10n ** BigInt(q.exp);
  if (per === "hour") {
    const perUnit = SECONDS_PER_UNIT[unit];
    if (perUnit === undefined) return null;
    denominatorNum *= perUnit; // hours = quantity × perUnit / 3600
    denominatorDen *= 3600n;
  }
  if (denominatorNum === 0n) return null;
  return (net * denominatorDen) / denominatorNum;
}
