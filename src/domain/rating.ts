import { LedgerError } from "./errors.js";
import { UINT256_MAX } from "./money.js";

/**
 * Rating: what a usage record costs, and how that gross amount splits between the operator and the
 * fee parties. Exact integer arithmetic throughout; the two rounding rules are:
 *
 *  1. gross = floor(quantity × unit_price × 10^scale): a customer never pays for a fraction of the
 *     asset's smallest unit (a record may instead carry its total `amount` directly);
 *  2. fee = clamp(floor(gross × bps / 10^4) + fixed, min, max), and fees are capped in rule order so
 *     that their sum never exceeds gross; net = gross − Σ fees.
 *
 * So net + Σ fees = gross exactly, every part is ≥ 0, and the only value that "moves" through
 * rounding is the fraction below one unit in rule 2, which stays with the operator (floor favours
 * the payee of the remainder, never the fee party).
 */

/** An exact non-negative decimal as digits / 10^exp. */
export interface Decimal {
  digits: bigint;
  exp: number;
}

const DECIMAL = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/;
export const MAX_DECIMAL_DIGITS = 40;
export const MAX_FRACTION_DIGITS = 18;

/** Parses "12", "0.5", "3600.000001"; refuses signs, exponents, more than 18 decimals or 40 digits. */
export function parseDecimal(text: string): Decimal | undefined {
  const m = DECIMAL.exec(text);
  if (!m) return undefined;
  const fraction = m[2] ?? "";
  if (fraction.length > MAX_FRACTION_DIGITS || m[1]!.length + fraction.length > MAX_DECIMAL_DIGITS) return undefined;
  return { digits: BigInt(m[1]! + fraction), exp: fraction.length };
}

/** floor(quantity × unitPrice × 10^scale), in the asset's smallest unit. */
export function grossFromPrice(quantity: Decimal, unitPrice: Decimal, scale: number): bigint {
  const numerator = quantity.digits * unitPrice.digits * 10n ** BigInt(scale);
  return numerator / 10n ** BigInt(quantity.exp + unitPrice.exp);
}

/** One fee party's rule, with amounts already resolved for the record's asset. */
export interface FeeRule {
  party: string;
  /** basis points of gross, 0..10000 */
  bps: number;
  fixed: bigint;
  min: bigint;
  max: bigint | null;
}

export interface Split {
  gross: bigint;
  net: bigint;
  fees: { party: string; amount: bigint }[];
}

export function splitGross(gross: bigint, rules: FeeRule[]): Split {
  if (gross < 0n || gross > UINT256_MAX) throw new LedgerError("invalid_request", "gross must be within 0..2^256-1");
  let left = gross;
  const fees = rules.map((r) => {
    let fee = (gross * BigInt(r.bps)) / 10_000n + r.fixed;
    if (fee < r.min) fee = r.min;
    if (r.max !== null && fee > r.max) fee = r.max;
    if (fee > left) fee = left; // the fees never take more than the whole
    left -= fee;
    return { party: r.party, amount: fee };
  });
  return { gross, net: left, fees };
}

/** A schedule's rule as configured: base terms plus overrides by resource and/or operator. */
export interface ConfiguredRule {
  party: string;
  bps: number;
  /** Amounts per asset code, in that asset's smallest unit. */
  fixed?: Record<string, string>;
  min?: Record<string, string>;
  max?: Record<string, string>;
  overrides?: ConfiguredOverride[];
}

export interface ConfiguredOverride {
  /** Exact resource, or a prefix ending in "*" (e.g. "gpu:h100*"). */
  resource?: string;
  operatorId?: string;
  bps?: number;
  fixed?: Record<string, string>;
  min?: Record<string, string>;
  max?: Record<string, string>;
}

const matchesResource = (pattern: string, resource: string) => (pattern.endsWith("*") ? resource.startsWith(pattern.slice(0, -1)) : pattern === resource);

/**
 * How specific an override is, compared in order: it names the operator; it names a resource; the
 * resource is exact (not a `prefix*` pattern); the length of what it matches on. An exact
 * `gpu:h100` wins over `gpu:h100*` (before, the `*` counted in the length and the pattern won).
 */
const specificity = (o: { operatorId?: string; resource?: string }): number[] => [
  o.operatorId !== undefined ? 1 : 0,
  o.resource !== undefined ? 1 : 0,
  o.resource !== undefined && !o.resource.endsWith("*") ? 1 : 0,
  o.resource === undefined ? 0 : o.resource.endsWith("*") ? o.resource.length - 1 : o.resource.length,
];

const compareRanks = (a: number[], b: number[]): number => {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
};

/**
 * The rule that applies to one record: the most specific matching override (operator and resource,
 * then operator, then resource; among resources the exact name before any pattern, then the longest
 * pattern's prefix) replaces the fields it sets.
 */
export function resolveRule(rule: ConfiguredRule, ctx: { resource: string; operatorId: string; assetCode: string }): FeeRule {
  const candidates = (rule.overrides ?? [])
    .filter((o) => (o.operatorId === undefined || o.operatorId === ctx.operatorId) && (o.resource === undefined || matchesResource(o.resource, ctx.resource)))
    .map((o) => ({ o, rank: specificity(o) }))
    .sort((a, b) => compareRanks(b.rank, a.rank));
  const o = candidates[0]?.o;
  const pick = (field: "fixed" | "min" | "max") => (o?.[field] ?? rule[field])?.[ctx.assetCode];
  return {
    party: rule.party,
    bps: o?.bps ?? rule.bps,
    fixed: BigInt(pick("fixed") ?? "0"),
    min: BigInt(pick("min") ?? "0"),
    max: pick("max") === undefined ? null : BigInt(pick("max")!),
  };
}
