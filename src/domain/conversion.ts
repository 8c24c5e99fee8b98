/**
 * The exact arithmetic of currency conversion, with no I/O. A rate is a positive fraction of whole
 * units; amounts are integers in smallest units (10^scale per whole unit). Every rounding is stated
 * and goes against creating value: what a conversion cannot pay exactly stays with the payer.
 */
import { LedgerError } from "./errors.js";
import { parseFraction } from "./payouts.js";

/** Whole units of the target asset that one whole unit of the source asset is worth: num / den, both > 0, reduced. */
export interface Rate {
  num: bigint;
  den: bigint;
}

/** The most decimals a scale may have (an ERC-20 `decimals` is a uint8). */
const MAX_SCALE = 255;

const RATE_MESSAGE = "must be a positive decimal number such as 2.5, at most 30 digits before and after the point";

const abs = (v: bigint): bigint => (v < 0n ? -v : v);

function gcd(a: bigint, b: bigint): bigint {
  a = abs(a);
  b = abs(b);
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

function reduced(num: bigint, den: bigint): Rate {
  const g = gcd(num, den);
  return { num: num / g, den: den / g };
}

/** ceil(a / b) for a ≥ 0, b > 0. */
const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;

function pow10(scale: number): bigint {
  if (!Number.isInteger(scale) || scale < 0 || scale > MAX_SCALE) throw new Error(`scale must be an integer 0..${MAX_SCALE}: ${scale}`);
  return 10n ** BigInt(scale);
}

function checkRate(r: Rate): void {
  if (r.num <= 0n || r.den <= 0n) throw new Error(`rate must be positive: ${r.num}/${r.den}`);
}

/** The rate in smallest units: one smallest source unit is worth n / d smallest target units. */
function unitRatio(fromScale: number, toScale: number, rate: Rate): { n: bigint; d: bigint } {
  checkRate(rate);
  return { n: rate.num * pow10(toScale), d: rate.den * pow10(fromScale) };
}

/**
 * Parses a rate written as a positive decimal ("2.5", "0.0004"): exact, no rounding, reduced.
 * Throws LedgerError("invalid_request") with an issue at `path` for anything else, or for zero.
 */
export function parseRate(value: string, path = "rate"): Rate {
  let fraction: { num: bigint; den: bigint } | undefined;
  try {
    fraction = parseFraction(value);
  } catch {
    fraction = undefined;
  }
  if (!fraction || fraction.num === 0n) {
    const message = `${path} ${RATE_MESSAGE}`;
    throw new LedgerError("invalid_request", message, [{ path, message }]);
  }
  return reduced(fraction.num, fraction.den);
}

/**
 * The rate a price feed reports as an integer `answer` with `decimals` decimals: answer / 10^decimals,
 * exact (no rounding), reduced. Throws LedgerError("invalid_request") if answer ≤ 0 or decimals is not
 * an integer 0..255.
 */
export function rateFromFeed(answer: bigint, decimals: number): Rate {
  if (answer <= 0n) {
    const message = `feed answer must be positive: ${answer}`;
    throw new LedgerError("invalid_request", message, [{ path: "answer", message }]);
  }
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > MAX_SCALE) {
    const message = `feed decimals must be an integer 0..${MAX_SCALE}: ${decimals}`;
    throw new LedgerError("invalid_request", message, [{ path: "decimals", message }]);
  }
  return reduced(answer, 10n ** BigInt(decimals));
}

/** The rate the other way round (target per source becomes source per target): exact, no rounding. */
export function invertRate(r: Rate): Rate {
  checkRate(r);
  return { num: r.den, den: r.num };
}

/**
 * The rate as a decimal string: exact when it terminates within `maxDecimals` decimals, otherwise
 * rounded half-up to `maxDecimals` decimals. No trailing zeros, no exponent ({1,3} → "0.333333333333333333").
 */
export function formatRate(r: Rate, maxDecimals = 18): string {
  checkRate(r);
  const unit = pow10(maxDecimals);
  const scaled = r.num * unit;
  let q = scaled / r.den;
  if (2n * (scaled % r.den) >= r.den) q += 1n; // half-up
  const whole = (q / unit).toString();
  const fraction = maxDecimals === 0 ? "" : (q % unit).toString().padStart(maxDecimals, "0").replace(/0+$/, "");
  return fraction ? `${whole}.${fraction}` : whole;
}

/**
 * Splits `amount` (≥ 0) in parts by basis points: part i is floor(amount × bps_i / 10,000) and the few
 * units flooring leaves (fewer than the number of parts) go to the first part, so the parts sum to
 * `amount` exactly. Each bps must be an integer 1..10,000 and they must sum to 10,000 (plain Error otherwise).
 */
export function splitByBps(amount: bigint, bps: number[]): bigint[] {
  if (amount < 0n) throw new Error(`amount must be ≥ 0: ${amount}`);
  if (bps.length === 0) throw new Error("a split needs at least one part");
  let total = 0;
  for (const b of bps) {
    if (!Number.isInteger(b) || b < 1 || b > 10_000) throw new Error(`bps must be an integer 1..10000: ${b}`);
    total += b;
  }
  if (total !== 10_000) throw new Error(`bps must sum to 10000: ${total}`);
  const parts = bps.map((b) => (amount * BigInt(b)) / 10_000n);
  const left = amount - parts.reduce((s, p) => s + p, 0n);
  parts[0] = parts[0]! + left;
  return parts;
}

/**
 * Converts `amount` (≥ 0 smallest source units) at `rate`. `to` is rounded down: floor(amount × rate) in
 * smallest target units. `used` is rounded up: the fewest source units worth at least `to`, so
 * used ≤ amount. `remainder` = amount − used goes back to the payer: nothing is created or lost.
 */
export function convertAmount(amount: bigint, fromScale: number, toScale: number, rate: Rate): { to: bigint; used: bigint; remainder: bigint } {
  if (amount < 0n) throw new Error(`amount must be ≥ 0: ${amount}`);
  const { n, d } = unitRatio(fromScale, toScale, rate);
  const to = (amount * n) / d;
  const used = ceilDiv(to * d, n);
  return { to, used, remainder: amount - used };
}

/**
 * What `amount` smallest source units (of either sign) are worth in smallest target units at `rate`,
 * rounded toward zero, so valueOf(−x) = −valueOf(x).
 */
export function valueOf(amount: bigint, fromScale: number, toScale: number, rate: Rate): bigint {
  const { n, d } = unitRatio(fromScale, toScale, rate);
  return (amount * n) / d; // bigint division truncates toward zero
}

/**
 * How far two rates are apart in basis points of the smaller: |a − b| / min(a, b) × 10,000, rounded up
 * so a bound is never passed by rounding. Symmetric; 0 for equal rates.
 */
export function deviationBps(a: Rate, b: Rate): bigint {
  checkRate(a);
  checkRate(b);
  const left = a.num * b.den; // a and b over the common denominator a.den × b.den
  const right = b.num * a.den;
  const diff = abs(left - right);
  const min = left < right ? left : right;
  return ceilDiv(diff * 10_000n, min);
}

/**
 * The correction that brings a counter account in line with the current worth of a position.
 * `position` is the platform's signed holding of X (credits − debits, in smallest X units at
 * `positionScale`); `book` is the signed balance of its counter account in the pricing currency P
 * (smallest units at `bookScale`); `rate` is whole P per whole X. Returns target − book, where
 * target = −valueOf(position) rounded toward zero. Positive: the position lost value (credit the
 * counter account, debit gains and losses); negative: a gain.
 */
export function revaluationDelta(position: bigint, positionScale: number, book: bigint, bookScale: number, rate: Rate): bigint {
  const target = -valueOf(position, positionScale, bookScale, rate);
  return target - book;
}
