import { capacityUnitMs, MS_PER_HOUR, msPerUnit, type CapacityVersion } from "./capacity.js";
import { unitsToDecimal } from "./money.js";
import { parseDecimal } from "./rating.js";

/**
 * Operator economics (docs/usage.md, "Utilisation and revenue per available unit-hour"): what an
 * operator could have sold (available unit-hours, from its declared capacity), what it sold (paid
 * unit-hours), and what that made per available unit-hour. Exact: unit-milliseconds as integers,
 * quantities as rationals; every figure rounded down once, at the end.
 */
export interface Rational {
  num: bigint;
  den: bigint;
}

/** A quantity of a time unit in unit-milliseconds, exactly (null for other units). */
export function paidUnitMs(quantity: string, unit: string): Rational | null {
  const per = msPerUnit(unit);
  const q = parseDecimal(quantity);
  if (per === undefined || !q) return null;
  return { num: q.digits * per, den: 10n ** BigInt(q.exp) };
}

/** paid / available as a fraction with 6 decimals, rounded down ("0.25" is 25%); null without capacity. */
export function utilisation(paid: Rational, availableUnitMs: bigint): string | null {
  if (availableUnitMs <= 0n) return null;
  return unitsToDecimal((paid.num * 1_000_000n) / (paid.den * availableUnitMs), 6);
}

/** Net per available unit-hour in the asset's smallest units, rounded down: ⌊net × 3,600,000 / available unit-ms⌋. */
export function netPerAvailableUnitHour(net: bigint, availableUnitMs: bigint): bigint | null {
  if (availableUnitMs <= 0n) return null;
  return (net * MS_PER_HOUR) / availableUnitMs;
}

const DAY = 86_400_000;

/**
 * The stretch of time a group of the earnings stands for: its UTC day, its week (from the Monday
 * its key names), its month, or the whole period for other groups; never beyond [from, to) or
 * past now (capacity not yet lived is not available yet).
 */
export function groupWindow(groupBy: string, key: string, from: Date, to: Date, now: Date): { from: number; to: number } {
  let start = from.getTime();
  let end = to.getTime();
  if (groupBy === "day" || groupBy === "week") {
    start = Date.parse(`${key}T00:00:00Z`);
    end = start + (groupBy === "day" ? DAY : 7 * DAY);
  } else if (groupBy === "month") {
    const [y, m] = key.split("-").map(Number);
    start = Date.UTC(y!, m! - 1, 1);
    end = Date.UTC(y!, m!, 1);
  }
  return { from: Math.max(start, from.getTime()), to: Math.min(end, to.getTime(), now.getTime()) };
}

/** Available unit-milliseconds of a resource in a window: its declared capacity's integral (0 where none is declared). */
export function availableUnitMs(versions: CapacityVersion[] | undefined, window: { from: number; to: number }): bigint | null {
  if (!versions || versions.length === 0) return null;
  return window.to > window.from ? capacityUnitMs(versions, window.from, window.to) : 0n;
}
