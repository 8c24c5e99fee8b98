import type { TransferResult } from "../db/transfer-writer.js";
import { writeTransfers } from "../db/transfer-writer.js";
import type { TransferInput } from "../domain/transfers.js";
import type { WriteReceipt } from "../db/queries/write-receipts.js";
import type { Queryable } from "../db/client.js";
import { receiptsOf, type LedgerContext, type TransferSubmission } from "./context.js";
import { lockUsageFunding } from "./funding.js";
import { allMarketplaceIds, marketplacesOfAccounts } from "../db/queries/periods.js";
import { bookingOnAccounts } from "./periods.js";

/**
 * Records one transfer request. Concurrent callers are coalesced into one database transaction by
 * the group committer; each gets its own result.
 */
export async function postTransfer(
  ctx: LedgerContext,
  input: TransferInput,
  receipt?: TransferSubmission["receipt"],
  dated?: DatedBy,
): Promise<TransferResult> {
  if (!dated) return ctx.transfers.submit({ input, receipt });
  const [r] = await writeTransfers(ctx.db, async (tx) => [await judgedUnderLocks(tx, input, dated)], { afterWrite: receiptsOf([{ input, receipt }]) });
  return r!;
}

/**
 * A transfer dated into the past (an explicit effective time, or a reversal effective when its
 * original was) is judged against the accounting periods of its accounts' marketplaces (of every
 * marketplace, on the platform's own accounts only) inside its own transaction, under their
 * funding locks in shared mode, which a change of period status takes
 * exclusively (src/services/periods.ts): a month cannot close between the judgement and the write.
 */
export interface DatedBy {
  accounts: string[];
  /** The effective time asked for (explicit), or the original's (a reversal without one). */
  at: Date;
  explicit: boolean;
}

async function judgedUnderLocks(tx: Queryable, input: TransferInput, dated: DatedBy): Promise<TransferInput> {
  await lockPeriodsOf(tx, [dated]);
  return judged(tx, input, dated);
}

/**
 * The funding locks (shared) of every marketplace whose periods these dated transfers are judged
 * against, taken at once in one order: of their accounts' marketplaces, or of every marketplace for
 * one on the platform's own accounts only (bookingOnAccounts). Taken item by item, a batch could
 * hold one marketplace's lock while waiting for another's that a payout's judgement, holding the
 * second exclusively, waits for the first of.
 */
async function lockPeriodsOf(tx: Queryable, dated: DatedBy[]): Promise<void> {
  const owners: string[][] = [];
  for (const d of dated) owners.push(await marketplacesOfAccounts(tx, d.accounts));
  const all = owners.some((o) => o.length === 0) ? await allMarketplaceIds(tx) : [...new Set(owners.flat())];
  await lockUsageFunding(tx, all);
}

/** A dated transfer judged against the periods (under the locks of lockPeriodsOf): a late reversal moved, naming what it belongs to. */
async function judged(tx: Queryable, input: TransferInput, dated: DatedBy): Promise<TransferInput> {
  const booking = await bookingOnAccounts(tx, dated.accounts, dated.at, dated.explicit);
  if (!booking.late || input.kind !== "reversal") return input;
  const lateFor = { period: booking.late.period, effective_at: booking.late.effectiveAt.toISOString() };
  return { ...input, effectiveAt: booking.effectiveAt, metadata: { ...(input.metadata ?? {}), late_for: lateFor } };
}

/**
 * Records a batch of requests in one database transaction, in order, each with its own result.
 * Items with an explicit effective time (`dated`, by place) are judged against the periods under
 * the funding locks, as a single transfer is; one that a month closed meanwhile refuses the batch.
 */
export function postTransfers(
  ctx: LedgerContext,
  inputs: TransferInput[],
  receipt?: WriteReceipt<void>,
  dated: (DatedBy | null)[] = [],
): Promise<TransferResult[]> {
  if (!dated.some((d) => d !== null)) return writeTransfers(ctx.db, inputs, { receipt });
  return writeTransfers(
    ctx.db,
    async (tx) => {
      await lockPeriodsOf(
        tx,
        dated.filter((d): d is DatedBy => d !== null),
      );
      const out: TransferInput[] = [];
      for (const [k, input] of inputs.entries()) out.push(dated[k] ? await judged(tx, input, dated[k]) : input);
      return out;
    },
    { receipt },
  );
}
