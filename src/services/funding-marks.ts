import type { Database } from "../db/client.js";
import { firstUnfundedRecord, tryLockMarketplaceFundingExclusive } from "../db/queries/funding.js";
import {
  lockFundingMark,
  lockMarketplaceFundingWaiting,
  lastFundingSeq,
  markCandidates,
  moveFundingMark,
  summarizeFundingSeqRanges,
} from "../db/queries/funding-marks.js";
import { inTransaction } from "./transaction.js";

/**
 * The funding marks (docs/ledger.md, "The funding mark"), moved by the workers: for each
 * marketplace and asset whose customers' debits are more than its pool holds (where a funding
 * judgment would walk its usage), the mark goes to the last record before the first one the money
 * leaves unfunded, so that judgments walk only what follows. Returns how many marks moved.
 *
 * A mark is only ever a sum of stored records up to a funding_seq below which every record is
 * committed; whether the money funds every record up to it is checked by each judgment with the
 * money of the moment, so a mark made when money was higher is not used, and one made from a
 * stale view of the money is only less useful, never wrong.
 */
export async function moveFundingMarks(db: Database, now: Date, misses: Map<string, number> = new Map()): Promise<number> {
  // Where the customers' debits alone are covered, no judgment walks the usage (the shortcut in unfundedUsage).
  const short = (await markCandidates(db)).filter((c) => BigInt(c.debits) > BigInt(c.available));
  if (short.length === 0) return 0;
  await summarizeFundingSeqRanges(db);
  let moved = 0;
  for (const c of short) {
    const key = `${c.marketplace_id}|${c.asset_id}`;
    const missed = misses.get(key) ?? 0;
    const result = await moveFundingMark1(db, c.marketplace_id, c.asset_id, BigInt(c.available), now, missed >= MARK_WAIT_AFTER_MISSES);
    if (result === "busy") misses.set(key, missed + 1);
    else misses.delete(key);
    if (result === "moved") moved++;
  }
  return moved;
}

/**
 * After this many steps in a row that found the marketplace writing usage (one step per
 * `JOURNAL_SEAL_INTERVAL_MS`: a minute at the default), the next one waits in line for the
 * marketplace's funding lock, at most MARK_WAIT_MS: a marketplace that never pauses between
 * batches has its usage wait that long, once, instead of keeping an old mark.
 */
export const MARK_WAIT_AFTER_MISSES = 12;
export const MARK_WAIT_MS = 2_000;

/**
 * Moves one mark: "busy" when the marketplace was writing usage (and `wait` was not asked, or the
 * wait ran out), "moved", or "kept" (already where the money reaches).
 */
export async function moveFundingMark1(
  db: Database,
  marketplaceId: string,
  assetId: string,
  available: bigint,
  now: Date,
  wait = false,
): Promise<"moved" | "kept" | "busy"> {
  // The last funding_seq drawn, read once no usage of the marketplace is being written: every
  // record of it up to there is committed. Usage waits only for this one read of the sequence.
  const top = await inTransaction(db, async (tx) => {
    if (wait) await lockMarketplaceFundingWaiting(tx, marketplaceId, MARK_WAIT_MS);
    else if (!(await tryLockMarketplaceFundingExclusive(tx, marketplaceId))) return null;
    return lastFundingSeq(tx);
  }).catch((err: unknown) => {
    if ((err as { code?: string }).code === "55P03") return null; // the wait ran out
    throw err;
  });
  if (top === null) return "busy";
  const { first } = await firstUnfundedRecord(db, marketplaceId, assetId, available);
  const to = first === null || first > top ? top : first - 1n;
  return inTransaction(db, async (tx) => {
    const from = await lockFundingMark(tx, marketplaceId, assetId);
    if (to === from) return "kept";
    await moveFundingMark(tx, { marketplaceId, assetId, from, to, at: now });
    return "moved";
  });
}
