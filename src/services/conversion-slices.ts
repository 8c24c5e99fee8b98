import type { Queryable } from "../db/client.js";
import { openRateLocks } from "../db/queries/rate-locks.js";
import type { Asset } from "../domain/assets.js";
import { convertAmount } from "../domain/conversion.js";
import { LedgerError } from "../domain/errors.js";
import type { ChosenRate } from "./rates.js";

/**
 * One slice of a convert payout's part: an amount of the earnings converted at one rate. A part is
 * sliced over the operator's rate locks of its pair first, oldest first, each at its lock's rate
 * (docs/settlement.md, "Rate policy"), and what they do not cover at the rate of the moment.
 */
export interface Slice {
  /** The rate lock used, or null: the rate of the moment (or no conversion, when both assets are one). */
  lockId: string | null;
  part: bigint;
  to: bigint;
  used: bigint;
  remainder: bigint;
  rate: ChosenRate | null;
  /** Marking the platform's position to the rate of the moment (on that slice only). */
  revaluation: bigint;
}

/**
 * The slices of `part` of the earnings asset converted into `to`, for `operatorId`. Must run under
 * the pair's conversion lock. Throws `no_rate_source` when locks do not cover the part and the
 * rate of the moment could not be used (`unavailable` says why): the payout waits.
 */
export async function sliceOf(
  tx: Queryable,
  operatorId: string,
  from: Asset,
  to: Asset,
  part: bigint,
  now: { rate: ChosenRate | null; unavailable: string | null },
): Promise<Slice[]> {
  if (from.id === to.id) return [{ lockId: null, part, to: part, used: part, remainder: 0n, rate: null, revaluation: 0n }];
  const slices: Slice[] = [];
  let left = part;
  for (const lock of left > 0n ? await openRateLocks(tx, operatorId, from.id, to.id) : []) {
    if (left === 0n) break;
    const remaining = BigInt(lock.remaining);
    const take = remaining < left ? remaining : left;
    const rate = { num: BigInt(lock.rate_num), den: BigInt(lock.rate_den) };
    const c = convertAmount(take, from.scale, to.scale, rate);
    // A slice too small to buy one smallest unit would use the lock for nothing: it is passed over,
    // and the newer locks still cover the part (a lock left with dust must not end the walk).
    if (c.to === 0n) continue;
    slices.push({
      lockId: lock.id,
      part: take,
      ...c,
      rate: { rate, rateId: lock.rate_id, source: lock.source, observedAt: new Date(lock.observed_at) },
      revaluation: 0n,
    });
    left -= take;
  }
  if (left > 0n || slices.length === 0) {
    if (now.rate === null) throw new LedgerError("no_rate_source", now.unavailable ?? `no usable rate for ${from.code}→${to.code}`);
    slices.push({ lockId: null, part: left, ...convertAmount(left, from.scale, to.scale, now.rate.rate), rate: now.rate, revaluation: 0n });
  }
  return slices;
}
