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
  // A transfer on the platform's own accounts only is judged against every marketplace's periods
  // (bookingOnAccounts): under every marketplace's lock.
  const owners = await marketplacesOfAccounts(tx, dated.accounts);
  await lockUsageFunding(tx, owners.length > 0 ? owners : await allMarketplaceIds(tx));
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
      const out: TransferInput[] = [];
      for (const [k, input] of inputs.entries()) out.push(dated[k] ? await judgedUnderLocks(tx, input, dated[k]) : input);
      return out;
    },
    { receipt },
  );
}
