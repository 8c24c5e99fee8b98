import type { Database } from "../db/client.js";
import { firstUnfundedRecord } from "../db/queries/funding.js";
import {
  lockFundingMark,
  lastFundingSeq,
  markCandidates,
  moveFundingMark,
  summarizeFundingSeqRanges,
  tryLockMarketplaceFunding,
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
export async function moveFundingMarks(db: Database, now: Date): Promise<number> {
  // Where the customers' debits alone are covered, no judgment walks the usage (the shortcut in unfundedUsage).
  const short = (await markCandidates(db)).filter((c) => BigInt(c.debits) > BigInt(c.available));
  if (short.length === 0) return 0;
  await summarizeFundingSeqRanges(db);
  let moved = 0;
  for (const c of short) if (await moveFundingMark1(db, c.marketplace_id, c.asset_id, BigInt(c.available), now)) moved++;
  return moved;
}

/** Moves one mark; false when the marketplace is writing usage right now (next time) or the mark stays. */
export async function moveFundingMark1(db: Database, marketplaceId: string, assetId: string, available: bigint, now: Date): Promise<boolean> {
  // The last funding_seq drawn, read once no usage of the marketplace is being written: every
  // record of it up to there is committed. Usage waits only for this one read of the sequence (a
  // try, never a wait in line).
  const top = await inTransaction(db, async (tx) => ((await tryLockMarketplaceFunding(tx, marketplaceId)) ? lastFundingSeq(tx) : null));
  if (top === null) return false;
  const { first } = await firstUnfundedRecord(db, marketplaceId, assetId, available);
  const to = first === null || first > top ? top : first - 1n;
  return inTransaction(db, async (tx) => {
    const from = await lockFundingMark(tx, marketplaceId, assetId);
    if (to === from) return false;
    await moveFundingMark(tx, { marketplaceId, assetId, from, to, at: now });
    return true;
  });
}
