import type { TransferResult } from "../db/transfer-writer.js";
import { writeTransfers } from "../db/transfer-writer.js";
import type { TransferInput } from "../domain/transfers.js";
import type { WriteReceipt } from "../db/queries/write-receipts.js";
import type { LedgerContext, TransferSubmission } from "./context.js";

/**
 * Records one transfer request. Concurrent callers are coalesced into one database transaction by
 * the group committer; each gets its own result.
 */
export function postTransfer(ctx: LedgerContext, input: TransferInput, receipt?: TransferSubmission["receipt"]): Promise<TransferResult> {
  return ctx.transfers.submit({ input, receipt });
}

/** Records a batch of requests in one database transaction, in order, each with its own result. */
export function postTransfers(ctx: LedgerContext, inputs: TransferInput[], receipt?: WriteReceipt<void>): Promise<TransferResult[]> {
  return writeTransfers(ctx.db, inputs, { receipt });
}
