import type { EvmChain } from "../../chain/evm.js";
import { getLatestAttempt, recordChainTxError } from "../../db/queries/chain-transactions.js";
import { listPayoutIdsOfChainTx } from "../../db/queries/payout-batches.js";
import { replace } from "./broadcast.js";
import type { BatchRow, PayoutContext } from "./context.js";
import { endUnpaid, settleReceipt } from "./settle.js";

/**
 * A submitted transaction none of whose attempts has a receipt (after a restart, a node that lost
 * it, a reorg, another transaction under its nonce): decide from the chain what became of it.
 */
export async function recoverUnreceipted(ctx: PayoutContext, chain: EvmChain, b: BatchRow, head: bigint, required: bigint): Promise<void> {
  const nonce = BigInt(b.nonce!);
  if ((await chain.nonceAt(head)) > nonce) return nonceTaken(ctx, chain, b, head, required, nonce);
  const latest = await getLatestAttempt(ctx.db, b.id);
  const due = BigInt(latest.waited_ms) >= BigInt(chain.settings.replace_after_seconds) * 1000n;
  if (!(await chain.knows(latest.hash))) {
    // Lost by the node (restart, eviction, a reorg): send the very same bytes again; if the node
    // refuses them now (fees too low), replace them under the same nonce.
    try {
      await chain.broadcast(latest.raw);
      ctx.log.info({ worker: "payouts", chain_tx: b.id, tx_hash: latest.hash }, "re-sent a transaction the node had lost");
    } catch (err) {
      if (!due || !(await replace(ctx, chain, b, latest, ["submitted"]))) throw err;
    }
    return;
  }
  if (due) await replace(ctx, chain, b, latest, ["submitted"]);
}

/**
 * The nonce is used, and no attempt of ours has a receipt. Before believing that another
 * transaction took the nonce, look for the vault's payments of these payouts: a node may not
 * find a receipt that exists (pruned index, a lagging fallback node).
 */
async function nonceTaken(ctx: PayoutContext, chain: EvmChain, b: BatchRow, head: bigint, required: bigint, nonce: bigint): Promise<void> {
  const ids = await listPayoutIdsOfChainTx(ctx.db, b.id);
  // From a little before the block it was signed at: a reorg may have mined it lower.
  const since = BigInt(b.signed_block ?? "0") - required;
  const paid = await chain.paidEventsFor(ids, since > 0n ? since : 0n, head);
  if (paid.length > 0) {
    const found = await chain.receipt(paid[0]!.txHash);
    if (found) return settleReceipt(ctx, chain, b, found, head);
    await recordChainTxError(ctx.db, b.id, `its payouts were paid in ${paid[0]!.txHash}, whose receipt the node does not return`);
    return;
  }
  // Buried deep enough, ours can never be mined.
  const deep = head + 1n >= required ? await chain.nonceAt(head + 1n - required) : 0n;
  if (deep > nonce) await endUnpaid(ctx, chain, b, "dropped: its nonce was used by another transaction", null);
}
