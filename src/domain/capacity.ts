import { LedgerError } from "./errors.js";
import { SECONDS_PER_UNIT } from "./earnings.js";
import { unitsToDecimal } from "./money.js";
import type { Decimal } from "./rating.js";

/**
 * Capacity (docs/usage.md, "Capacity"): what an operator can sell of a resource over time, and the
 * rule that usage may not claim more of it than a period holds. All of it in exact integers of
 * unit-milliseconds (one unit of the resource for one millisecond): 3,600,000 make a unit-hour.
 */
export interface CapacityVersion {
  resource: string;
  version: number;
  units: number;
  effectiveFrom: Date;
  until: Date | null;
}

export const MS_PER_HOUR = 3_600_000n;

/** Milliseconds of one unit of a time unit (gpu_second: 1000), or undefined for units that are not time. */
export function msPerUnit(unit: string): bigint | undefined {
  const s = SECONDS_PER_UNIT[unit];
  return s === undefined ? undefined : s * 1000n;
}

/**
 * The stretches of time each version is in force, oldest first: from its effective_from until its
 * `until`, or the next version's effective_from, whichever comes first. Between an `until` and the
 * next version the operator has declared nothing to sell: zero units.
 */
export function segments(versions: CapacityVersion[]): { from: number; to: number; units: bigint }[] {
  const sorted = [...versions].sort((a, b) => a.effectiveFrom.getTime() - b.effectiveFrom.getTime());
  return sorted.map((v, i) => {
    const next = sorted[i + 1]?.effectiveFrom.getTime() ?? Number.POSITIVE_INFINITY;
    return { from: v.effectiveFrom.getTime(), to: Math.min(v.until?.getTime() ?? Number.POSITIVE_INFINITY, next), units: BigInt(v.units) };
  });
}

/** Unit-milliseconds of capacity in [from, to): the integral of the declared units over that time. */
export function capacityUnitMs(versions: CapacityVersion[], from: number, to: number): bigint {
  let total = 0n;
  for (const s of segments(versions)) {
    const overlap = Math.min(s.to, to) - Math.max(s.from, from);
    if (overlap > 0) total += s.units * BigInt(overlap);
  }
  return total;
}

/** The units in force at an instant (0 after an `until`), or null before the first version. */
export function unitsAt(versions: CapacityVersion[], at: number): number | null {
  const segs = segments(versions);
  if (segs.length === 0 || at < segs[0]!.from) return null;
  return Number(segs.find((s) => s.from <= at && at < s.to)?.units ?? 0n);
}

/** A quantity of a time unit in unit-milliseconds, rounded up (a record claims at least what it says). */
export function claimedUnitMs(quantity: Decimal, perUnitMs: bigint): bigint {
  const num = quantity.digits * perUnitMs;
  const den = 10n ** BigInt(quantity.exp);
  return (num + den - 1n) / den;
}

/**
 * The share of a record's unit-milliseconds that falls in [from, to), prorated evenly over the
 * record's own period and rounded down: ⌊claimed × overlap / length⌋ (0 for a period of no length).
 */
export function shareIn(claimed: bigint, period: { from: number; to: number }, from: number, to: number): bigint {
  const length = period.to - period.from;
  const overlap = Math.min(period.to, to) - Math.max(period.from, from);
  if (length <= 0 || overlap <= 0) return 0n;
  return (claimed * BigInt(overlap)) / BigInt(length);
}

/** Unit-milliseconds as unit-hours, 6 decimals, rounded down. */
export function unitHours(unitMs: bigint): string {
  return unitsToDecimal((unitMs * 1_000_000n) / MS_PER_HOUR, 6);
}

/** What a check found: the capacity of the record's period, what other usage holds of it, what the record claims. */
export interface CapacityJudgement {
  capacity: bigint;
  used: bigint;
  claimed: bigint;
}

export const exceeds = (j: CapacityJudgement) => j.used + j.claimed > j.capacity;

/** The refusal of a record beyond capacity, saying how much was free. */
export function capacityExceeded(operatorId: string, resource: string, period: { from: Date; to: Date }, j: CapacityJudgement): LedgerError {
  const free = j.capacity > j.used ? j.capacity - j.used : 0n;
  const message =
    `operator ${operatorId} declared ${unitHours(j.capacity)} ${resource} unit-hours of capacity from ${period.from.toISOString()} to ` +
    `${period.to.toISOString()}; its usage in every marketplace already holds ${unitHours(j.used)} of them, so ${unitHours(free)} are free, ` +
    `less than the ${unitHours(j.claimed)} this record claims`;
  return new LedgerError("capacity_exceeded", message, [{ path: "quantity", message: `${unitHours(free)} ${resource} unit-hours free in the period` }]);
}
