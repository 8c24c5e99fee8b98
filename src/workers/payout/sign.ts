import type { BatchItem, EvmChain, Fees, VaultCall } from "../../chain/evm.js";
import { getAsset } from "../../db/queries/assets.js";
import {
  advanceSenderNonce,
  failBatch,
  failEmptyBatch,
  insertSender,
  listBatchedChainTxs,
  lockChainTxStatus,
  lockSenderNextNonce,
  markChainTxSigned,
  recordChainTxError,
  recordSignedTransaction,
  senderKnown,
} from "../../db/queries/chain-transactions.js";
import { listBatchItems, markPayoutsSigned } from "../../db/queries/payout-batches.js";
import { recordPayoutEvents } from "../../db/queries/payouts.js";
import { failPayouts } from "../../services/fail-payouts.js";
import { inTransaction } from "../../services/transaction.js";
import { requeue, tokenOf, vaultRoom, type BatchRow, type PayoutContext } from "./context.js";

/** Step 2: simulate each batch again, then take a nonce and store the signed transaction. */
export async function signBatched(ctx: PayoutContext, chain: EvmChain): Promise<void> {
  const batches = await listBatchedChainTxs(ctx.db, chain.chainId, chain.sender);
  for (const b of batches) await signBatch(ctx, chain, b);
}

async function signBatch(ctx: PayoutContext, chain: EvmChain, b: BatchRow): Promise<void> {
  const asset = (await getAsset(ctx.db, b.asset_id))!;
  const items = await listBatchItems(ctx.db, b.id, ["batched"]);
  if (items.length === 0) {
    await failEmptyBatch(ctx.db, b.id);
    return;
  }
  const call = chain.batchCall(tokenOf(asset), items);
  const sim = await chain.simulate(call);
  if (!sim.ok && sim.failedIndex !== undefined && items[sim.failedIndex]) {
    // The vault went short since the batch was made (another signer's payouts, a withdrawal):
    // nobody's payout fails for that; all go back to wait for funds.
    if ((await vaultRoom(ctx, chain, asset, b.id)) < items.reduce((s, x) => s + x.amount, 0n)) {
      await inTransaction(ctx.db, async (tx) => {
        await requeue(ctx, tx, b.id, ["batched"], false, "the vault is short of funds");
        await failBatch(tx, b.id, "the vault is short of funds; the payouts were queued again");
      });
      return;
    }
    // Isolate: the bad item fails, the others go back to the queue; this batch ends before it had a nonce.
    const bad = items[sim.failedIndex]!;
    await failPayouts(ctx.db, {
      ids: [bad.payoutId],
      reason: `cannot be paid: ${sim.reason}`,
      from: ["batched"],
      alsoInTx: async (tx) => {
        await requeue(ctx, tx, b.id, ["batched"], false);
        await failBatch(tx, b.id, `payout ${bad.payoutId} cannot be paid; the rest were queued again`);
      },
    });
    return;
  }
  if (!sim.ok) {
    await recordChainTxError(ctx.db, b.id, `would revert: ${sim.reason}`);
    return;
  }
  const fees = await chain.fees();
  const gas = (sim.gas * 12n) / 10n + 5_000n;
  const signedBlock = await chain.head();
  await ensureSender(ctx, chain);
  const signed = await storeSigned(ctx, chain, b, items, call, gas, fees, signedBlock);
  if (signed) ctx.fault("after_sign");
}

/**
 * In one transaction: takes the signer's next nonce, signs the call, stores the signed bytes and
 * moves the batch and its payouts to signed. Nothing (null) when the batch changed meanwhile.
 */
async function storeSigned(
  ctx: PayoutContext,
  chain: EvmChain,
  b: BatchRow,
  items: BatchItem[],
  call: VaultCall,
  gas: bigint,
  fees: Fees,
  signedBlock: bigint,
): Promise<string | null> {
  return inTransaction(ctx.db, async (tx) => {
    const nextNonce = await lockSenderNextNonce(tx, chain.chainId, chain.sender);
    if ((await lockChainTxStatus(tx, b.id)) !== "batched") return null;
    const now = await listBatchItems(tx, b.id, ["batched"]);
    if (now.map((x) => x.payoutId).join() !== items.map((x) => x.payoutId).join()) return null; // changed meanwhile: next tick
    const nonce = BigInt(nextNonce!);
    const { hash, raw } = await chain.sign(call, nonce, gas, fees);
    await recordSignedTransaction(tx, b.id, hash, raw, fees);
    await markChainTxSigned(tx, b.id, nonce, call, gas, signedBlock);
    await markPayoutsSigned(tx, b.id);
    await recordPayoutEvents(
      tx,
      items.map((x) => x.payoutId),
      "signed",
      ctx.now(),
      { chain_tx_id: b.id, nonce: nonce.toString(), tx_hash: hash },
    );
    await advanceSenderNonce(tx, chain.chainId, chain.sender);
    return hash;
  });
}

/** The first use of a signer on a chain starts its nonce from the node; afterwards the database decides. */
async function ensureSender(ctx: PayoutContext, chain: EvmChain): Promise<void> {
  if (await senderKnown(ctx.db, chain.chainId, chain.sender)) return;
  const nonce = await chain.pendingNonce();
  await insertSender(ctx.db, chain.chainId, chain.sender, nonce);
}
