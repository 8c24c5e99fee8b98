import type { Queryable } from "../db/client.js";
import { lockPayoutLimits } from "../db/queries/payout-policies.js";
import { lockOperatorPayoutDay, sumPayoutsNotFailed, type Payout } from "../db/queries/payouts.js";
import { LedgerError } from "../domain/errors.js";
import type { Asset } from "../domain/assets.js";
import { getOperatorPayoutLimits, getPayoutPolicy, lowerCap } from "./payout-policies.js";
import { utcDay } from "./payouts.js";

/** A part of a convert payout as its caps see it: its asset, its own payout's id, its caps, and the amount it pays. */
export interface CappedPart {
  asset: Asset;
  childId: string;
  caps: PartCaps;
  amount: bigint;
}

// The payout policy of the assets a convert payout's parts are paid in (src/services/convert-payout.ts).

/** What a part of another asset than the earnings' may be: it leaves that asset's treasury, so that asset's payout policy bounds it. */
export interface PartCaps {
  maxPerPayout: bigint | null;
  maxPerDay: bigint | null;
  approvalThreshold: bigint | null;
}

/**
 * A part's payout caps: the payout policy of its asset and the operator's own caps of it (the lower
 * applies), and the policy's approval threshold. The earnings asset's were applied when the payout
 * was asked for; a part in another asset leaves that asset's treasury, which its own policy bounds.
 */
export async function capsOf(db: Queryable, operatorId: string, assetId: string): Promise<PartCaps> {
  const policy = await getPayoutPolicy(db, assetId);
  const own = await getOperatorPayoutLimits(db, operatorId, assetId);
  return {
    maxPerPayout: lowerCap(policy.maxPerPayout, own.maxPerPayout),
    maxPerDay: lowerCap(policy.maxPerDay, own.maxPerDay),
    approvalThreshold: policy.approvalThreshold,
  };
}

/**
 * Inside the transaction, once the parts are sliced: each part of another asset within that asset's
 * caps (per payout, and per UTC day with the operator's other payouts of the asset, under the same
 * daily lock as a payout asked for in it). A part above a cap refuses the conversion: the payout
 * waits (its note says why) until the day's cap allows it, or is cancelled.
 */
export async function checkPartCaps(tx: Queryable, now: Date, payout: Payout, parts: CappedPart[]): Promise<void> {
  for (const p of parts) {
    const amount = p.amount;
    if (amount === 0n) continue;
    const { maxPerPayout, maxPerDay } = p.caps;
    if (maxPerPayout !== null && amount > maxPerPayout) {
      throw new LedgerError(
        "payout_limit_exceeded",
        `its ${p.asset.code} part (${amount}) is above the largest payout of ${p.asset.code} (${maxPerPayout}, in its smallest units)`,
      );
    }
    if (maxPerDay === null) continue;
    const { start, end } = utcDay(now);
    const left = maxPerDay - (await sumPayoutsNotFailed(tx, payout.operatorId, p.asset.id, start, end, p.childId));
    if (amount > left) {
      throw new LedgerError(
        "payout_limit_exceeded",
        `its ${p.asset.code} part (${amount}) is above what operator ${payout.operatorId} may still be paid in ${p.asset.code} today (${left > 0n ? left : 0n} of ${maxPerDay}, UTC)`,
      );
    }
  }
}

/**
 * Inside the transaction, before the daily locks: the parts' caps as they are in force now, read
 * under their assets' payout-limit locks (shared, in asset id order), so that a policy or an
 * operator's caps approved since the parts were read applies, and one approved now waits for this
 * conversion's commit.
 */
export async function capsInForce(tx: Queryable, payout: Payout, parts: Pick<CappedPart, "asset" | "caps">[]): Promise<void> {
  for (const id of [...new Set(parts.map((p) => p.asset.id))].sort()) await lockPayoutLimits(tx, id, "shared");
  for (const p of parts) p.caps = await capsOf(tx, payout.operatorId, p.asset.id);
}

/**
 * The daily payout locks of the parts' assets (by asset id), taken before the operator's funding
 * lock, as a payout asked for in one of them takes its daily lock first.
 */
export async function lockPartDays(tx: Queryable, payout: Payout, parts: Pick<CappedPart, "asset" | "caps">[]): Promise<void> {
  for (const id of [...new Set(parts.filter((p) => p.caps.maxPerDay !== null).map((p) => p.asset.id))].sort())
    await lockOperatorPayoutDay(tx, payout.operatorId, id);
}
