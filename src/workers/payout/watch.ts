import type { EvmChain } from "../../chain/evm.js";
import { listAttemptHashes, listSubmittedChainTxs, recordChainTxError } from "../../db/queries/chain-transactions.js";
import { errorSummary, type BatchRow, type PayoutContext } from "./context.js";
import { recoverUnreceipted } from "./recover.js";
import { settleReceipt } from "./settle.js";

/** Step 4: follow submitted transactions to a final answer. One batch's failure does not stop the others. */
export async function watchSubmitted(ctx: PayoutContext, chain: EvmChain): Promise<void> {
  const batches = await listSubmittedChainTxs(ctx.db, chain.chainId, chain.sender);
  if (batches.length === 0) return;
  const head = await chain.head();
  let firstError: unknown;
  for (const b of batches) {
    try {
      await watch(ctx, chain, b, head);
    } catch (err) {
      firstError ??= err;
      await recordChainTxError(ctx.db, b.id, errorSummary(err)).catch(() => {});
    }
  }
  if (firstError !== undefined) throw firstError;
}

/** A receipt of any of the batch's attempts is settled (step 5); without one, the batch is recovered. */
async function watch(ctx: PayoutContext, chain: EvmChain, b: BatchRow, head: bigint): Promise<void> {
  const required = BigInt(chain.settings.confirmations);
  const attempts = await listAttemptHashes(ctx.db, b.id);
  let receipt = null;
  for (const hash of attempts) {
    receipt = await chain.receipt(hash);
    if (receipt) break;
  }
  if (receipt) return settleReceipt(ctx, chain, b, receipt, head);
  return recoverUnreceipted(ctx, chain, b, head, required);
}
