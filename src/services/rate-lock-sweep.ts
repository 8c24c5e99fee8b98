import type { Queryable } from "../db/client.js";
import { lockOperatorPayoutFunds } from "../db/queries/funding.js";
import { dropQueued, hasOpenLocks, queuedMarketplaces, sweepLocks } from "../db/queries/rate-locks.js";
import { unfundedNets, withheldEarnings, type Without } from "./funding.js";

/**
 * Keeps an operator's open rate locks from `assetId` within the earnings they can still be used for
 * (src/db/queries/rate-locks.ts sweepLocks; docs/settlement.md, "Rate policy"). Called wherever
 * earnings leave the payable (a payout requested, a reversal, a receivable recovered) and where
 * locks are made or used. Under the operator's payout lock of the asset, which payouts, reversals and
 * recoveries take first: none of them changes the balance or what is withheld between the two
 * reads. Usage is not held back by it; what is withheld is read first, so usage posted meanwhile
 * is counted in the balance but not withheld, which releases less, never a lock an honest operator
 * still needs (the next sweep releases the rest). `shown`: what awaits the marketplaces' money is judged
 * as for a balance shown (from the funding mark, the same records and amounts as a walk over all of
 * them): for the lock worker, whose sweep runs while it holds a marketplace's funding lock, which
 * that marketplace's usage waits for. Where money leaves the payable, the full walk, as the payout's.
 */
export async function sweepRateLocks(tx: Queryable, operatorId: string, assetId: string, options: Pick<Without, "shown"> = {}): Promise<void> {
  await lockOperatorPayoutFunds(tx, operatorId, assetId);
  // Most operators have no open lock (marketplaces at_payout): nothing to read then.
  if (!(await hasOpenLocks(tx, operatorId, assetId))) return;
  const w = await withheldEarnings(tx, operatorId, assetId, options);
  await sweepLocks(tx, operatorId, assetId, w.awaiting.total + w.receivable);
}

/**
 * `amount` of the operator's earnings in `assetId` left the payable before their records were
 * locked: takes it out of the funded queued records (src/db/queries/rate-locks.ts dropQueued).
 */
export async function dropQueuedPaid(tx: Queryable, operatorId: string, assetId: string, amount: bigint): Promise<void> {
  if (amount <= 0n) return;
  const markets = await queuedMarketplaces(tx, operatorId, assetId);
  if (markets.length === 0) return;
  const unfunded = new Map<string, Map<bigint, bigint>>();
  for (const m of markets) unfunded.set(m, await unfundedNets(tx, m, assetId, operatorId, false));
  await dropQueued(tx, operatorId, assetId, amount, unfunded);
}
