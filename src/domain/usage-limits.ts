import { LedgerError } from "./errors.js";
import { parseDecimal, type Decimal } from "./rating.js";

/**
 * What one usage record may claim, per marketplace and asset (docs/usage.md, "Limits"): the largest
 * gross of one record, and for each unit the largest quantity per second of the record's period.
 * They are set by the platform (an admin), not by the marketplace, so that no tenant can post a
 * record that credits an operator with an absurd amount, or more GPU time than a period holds.
 */
export interface UsageLimits {
  /** In the asset's smallest unit. */
  maxGrossPerRecord: bigint;
  /** Per unit: the largest quantity per second of the period; a unit absent here has no such limit. */
  maxQuantityPerSecond: Map<string, Decimal>;
}

/** One million whole units of the asset per record. */
export const DEFAULT_MAX_GROSS_WHOLE_UNITS = 1_000_000n;

/**
 * The most any one usage record may claim, whatever an admin sets: 2^128 - 1 smallest units. An
 * account's running totals are bounded by 2^256 - 1, so no number of records that a tenant could
 * ever post (2^128 of them) can make a total overflow and block another tenant's writes to an
 * account they share (an operator's payable).
 */
export const MAX_GROSS_PER_RECORD_CEILING = (1n << 128n) - 1n;
/** Time units default to at most this many of the resource in use at once (e.g. 100,000 GPUs). */
export const DEFAULT_MAX_PARALLEL = 100_000n;

/** An exact rate: num / den of a unit per second. */
export interface Rate {
  num: bigint;
  den: bigint;
}

/** The default rate of a time unit (`*_second`, `*_minute`, `*_hour`), or undefined for other units. */
export function defaultRate(unit: string): Rate | undefined {
  const per = /(^|_)seconds?$/.test(unit) ? 1n : /(^|_)minutes?$/.test(unit) ? 60n : /(^|_)hours?$/.test(unit) ? 3600n : undefined;
  return per === undefined ? undefined : { num: DEFAULT_MAX_PARALLEL, den: per };
}

/** A rate as text: a decimal when it is one, else "num/den". */
export function formatRate(r: Rate): string {
  const g = gcd(r.num, r.den);
  r = { num: r.num / g, den: r.den / g };
  for (let exp = 0; exp <= 18; exp++) {
    const scaled = r.num * 10n ** BigInt(exp);
    if (scaled % r.den === 0n) return formatDecimal({ digits: scaled / r.den, exp });
  }
  return `${r.num}/${r.den}`;
}

/** The limits when none are set: a million whole units per record, and never above the ceiling (an asset of 33 decimals or more). */
export function defaultLimits(scale: number): UsageLimits {
  const gross = DEFAULT_MAX_GROSS_WHOLE_UNITS * 10n ** BigInt(scale);
  return { maxGrossPerRecord: gross < MAX_GROSS_PER_RECORD_CEILING ? gross : MAX_GROSS_PER_RECORD_CEILING, maxQuantityPerSecond: new Map() };
}

/** The rate that applies to a unit: the one set, else the time unit's default. */
export function rateFor(limits: UsageLimits, unit: string): Rate | undefined {
  const set = limits.maxQuantityPerSecond.get(unit);
  return set ? { num: set.digits, den: 10n ** BigInt(set.exp) } : defaultRate(unit);
}

/** Refuses a record beyond its limits with usage_limit_exceeded, naming the limit and what was asked. */
export function checkUsageLimits(
  record: { quantity: Decimal; unit: string; periodStart: Date; periodEnd: Date; gross: bigint; pricedBy?: "unitPrice" | "amount" },
  limits: UsageLimits,
  assetCode: string,
): void {
  if (record.gross > limits.maxGrossPerRecord) {
    const message = `the record's gross ${record.gross} exceeds the limit of ${limits.maxGrossPerRecord} ${assetCode} (smallest units) per record for this marketplace (max_gross_per_record)`;
    throw new LedgerError("usage_limit_exceeded", message, [{ path: record.pricedBy === "amount" ? "amount" : "quantity", message }]);
  }
  const rate = rateFor(limits, record.unit);
  if (rate === undefined) return;
  const ms = BigInt(record.periodEnd.getTime() - record.periodStart.getTime());
  // quantity ≤ rate × seconds  ⇔  q.digits × rate.den × 1000 ≤ rate.num × ms × 10^q.exp (exact)
  const left = record.quantity.digits * rate.den * 1000n;
  const right = rate.num * ms * 10n ** BigInt(record.quantity.exp);
  if (left > right) {
    const most = formatRate({ num: rate.num * ms, den: rate.den * 1000n });
    const seconds = formatDecimal({ digits: ms, exp: 3 });
    const message = `${formatDecimal(record.quantity)} ${record.unit} in a period of ${seconds} s is more than the limit of ${formatRate(rate)} ${record.unit} per second (max_quantity_per_second) allows: at most ${most}`;
    throw new LedgerError("usage_limit_exceeded", message, [{ path: "quantity", message }]);
  }
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a === 0n ? 1n : a;
}

/** A decimal as text, without trailing zeros. */
export function formatDecimal(d: Decimal): string {
  if (d.exp === 0) return d.digits.toString();
  const s = d.digits.toString().padStart(d.exp + 1, "0");
  const whole = s.slice(0, s.length - d.exp);
  const frac = s.slice(s.length - d.exp).replace(/0+$/, "");
  return frac ? `${whole}.${frac}` : whole;
}

/** Parses a rate given by an admin: a positive decimal of at most 40 digits and 18 decimals. */
export function parseRate(text: string): Decimal | undefined {
  const d = parseDecimal(text);
  return d && d.digits > 0n ? d : undefined;
}
