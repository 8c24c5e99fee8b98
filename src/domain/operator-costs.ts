import { MS_PER_HOUR } from "./capacity.js";
import type { Rational } from "./economics.js";
import { unitsToDecimal } from "./money.js";
import type { Decimal } from "./rating.js";

/**
 * An operator's costs of a machine class and its margin (docs/usage.md, "Costs, margin and
 * what-if"). Costs are per unit (one GPU and its share of the server) in display units of an asset;
 * they are charged on **available** unit-time (the declared capacity: a machine draws power and
 * pays its rent whether sold or not). Each cost component is worked out exactly and rounded **up**
 * once to the asset's smallest unit (a margin is never flattered by rounding); revenue is the
 * ledger's net, as the earnings report has it.
 */
export interface UnitCosts {
  powerWatts: Decimal;
  pricePerKwh: Decimal;
  bandwidthMonthly: Decimal;
  otherMonthly: Decimal;
  purchasePrice: Decimal;
  depreciationMonths: number;
}

export interface CostBreakdown {
  energy: bigint;
  bandwidth: bigint;
  other: bigint;
  depreciation: bigint;
  total: bigint;
}

/** The hours of the "month" of a what-if: 365 × 24 / 12. */
export const HOURS_PER_MONTH = 730n;

const pow10 = (n: number | bigint) => 10n ** BigInt(n);
const ceilDiv = (num: bigint, den: bigint) => (num + den - 1n) / den;

/**
 * The costs of `unitMs` unit-milliseconds of capacity in a month of `monthMs` milliseconds, in the
 * asset's smallest units (10^scale per display unit):
 * energy = watts × unit-hours × price per kWh / 1000; bandwidth, other = monthly × unit-ms / month-ms;
 * depreciation = purchase price × unit-ms / month-ms / depreciation months.
 */
export function costsOf(c: UnitCosts, unitMs: bigint, monthMs: bigint, scale: number): CostBreakdown {
  const s = pow10(scale);
  const energy = ceilDiv(c.powerWatts.digits * c.pricePerKwh.digits * unitMs * s, pow10(c.powerWatts.exp + c.pricePerKwh.exp) * MS_PER_HOUR * 1000n);
  const monthly = (d: Decimal, months = 1n) => ceilDiv(d.digits * unitMs * s, pow10(d.exp) * monthMs * months);
  const bandwidth = monthly(c.bandwidthMonthly);
  const other = monthly(c.otherMonthly);
  const depreciation = monthly(c.purchasePrice, BigInt(c.depreciationMonths));
  return { energy, bandwidth, other, depreciation, total: energy + bandwidth + other + depreciation };
}

/** Adds paid unit-time of several rows (of several time units) exactly. */
export function addRationals(values: Rational[]): Rational {
  return values.reduce((a, b) => ({ num: a.num * b.den + b.num * a.den, den: a.den * b.den }), { num: 0n, den: 1n });
}

/** Net per paid unit-hour in smallest units, rounded down: ⌊net × 3,600,000 / paid unit-ms⌋ (null when nothing was paid). */
export function netPerPaidUnitHour(net: bigint, paid: Rational): bigint | null {
  if (paid.num <= 0n) return null;
  return (net * MS_PER_HOUR * paid.den) / paid.num;
}

/** Paid unit-time in unit-hours, 6 decimals rounded down. */
export function rationalHours(r: Rational): string {
  return unitsToDecimal((r.num * 1_000_000n) / (r.den * MS_PER_HOUR), 6);
}

/**
 * The monthly revenue a what-if expects of `units` units: units × 730 h × utilisation × realised
 * rate per paid unit-hour, which is units × 730 h × net / available unit-hours of the history,
 * rounded down once (null without available history).
 */
export function expectedMonthlyRevenue(units: number, net: bigint, availableUnitMs: bigint): bigint | null {
  if (availableUnitMs <= 0n) return null;
  return (BigInt(units) * HOURS_PER_MONTH * MS_PER_HOUR * net) / availableUnitMs;
}

/** Months to earn back the purchase price of `units` units from a monthly margin, 2 decimals rounded up (null unless the margin is positive). */
export function paybackMonths(purchasePrice: Decimal, units: number, scale: number, monthlyMargin: bigint): string | null {
  if (monthlyMargin <= 0n) return null;
  const num = purchasePrice.digits * BigInt(units) * pow10(scale) * 100n;
  return unitsToDecimal(ceilDiv(num, pow10(purchasePrice.exp) * monthlyMargin), 2);
}
