import type { Database } from "../db/client.js";
import { firstUnfundedRecord, tryLockMarketplaceFundingExclusive } from "../db/queries/funding.js";
import {
  fundingTopWhileWriting,
  fundingWritersRunning,
  lockFundingMark,
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
export async function moveFundingMarks(db: Database, now: Date, writing: WritingTops = new Map()): Promise<number> {
  // Where the customers' debits alone are covered, no judgment walks the usage (the shortcut in unfundedUsage).
  const short = (await markCandidates(db)).filter((c) => BigInt(c.debits) > BigInt(c.available));
  if (short.length === 0) return 0;
  await summarizeFundingSeqRanges(db);
  let moved = 0;
  for (const c of short) if ((await moveFundingMark1(db, c.marketplace_id, c.asset_id, BigInt(c.available), now, writing)) === "moved") moved++;
  return moved;
}

/**
 * Per marketplace and asset, what a step found while the marketplace was writing usage: the last
 * funding_seq drawn and the transactions writing it then (fundingTopWhileWriting). Kept by the
 * caller from one step to the next (the workers keep one for their life).
 */
export type WritingTops = Map<string, { top: bigint; writers: string[] }>;

/**
 * Moves one mark: "moved", "kept" (already where the money reaches), or "busy" (the marketplace
 * is writing usage, and nothing is known yet below which every record is committed).
 *
 * The mark's top is a funding_seq below which every record of the marketplace is committed. When
 * no usage of it is being written (its funding lock is free), that is the last funding_seq drawn,
 * read under the lock, which usage then waits for during that one read. When usage is being
 * written, the step never waits: it notes the last funding_seq drawn and who is writing, and a
 * later step uses that top once all of those have ended, whoever writes then. So a marketplace
 * that never pauses between batches has its mark moved too, one step behind.
 */
export async function moveFundingMark1(
  db: Database,
  marketplaceId: string,
  assetId: string,
  available: bigint,
  now: Date,
  writing: WritingTops = new Map(),
): Promise<"moved" | "kept" | "busy"> {
  const key = `${marketplaceId}|${assetId}`;
  let top = await inTransaction(db, async (tx) => ((await tryLockMarketplaceFundingExclusive(tx, marketplaceId)) ? lastFundingSeq(tx) : null));
  if (top === null) {
    const noted = writing.get(key);
    if (noted !== undefined && !(await fundingWritersRunning(db, noted.writers))) top = noted.top;
    writing.set(key, await fundingTopWhileWriting(db, marketplaceId));
    if (top === null) return "busy";
  } else writing.delete(key);
  const { first } = await firstUnfundedRecord(db, marketplaceId, assetId, available);
  const to = first === null || first > top ? top : first - 1n;
  return inTransaction(db, async (tx) => {
    const from = await lockFundingMark(tx, marketplaceId, assetId);
    if (to === from) return "kept";
    await moveFundingMark(tx, { marketplaceId, assetId, from, to, at: now });
    return "moved";
  });
}
