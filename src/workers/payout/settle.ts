import { ZERO_ADDRESS, type EvmChain } from "../../chain/evm.js";
import { ensureAccounts } from "../../db/ensure-accounts.js";
import { getAsset } from "../../db/queries/assets.js";
import { findNativeAsset, lockChainTxStatus, markChainTxConfirmed, markChainTxFailed, recordChainTxError } from "../../db/queries/chain-transactions.js";
import { listPayoutsInFlightOfChainTx, listUnpaidCandidates, lockInFlightPayoutHolds, markInFlightPayoutsFailed } from "../../db/queries/payout-batches.js";
import { recordPayoutEvents } from "../../db/queries/payouts.js";
import { writeTransfers } from "../../db/transfer-writer.js";
import type { Asset } from "../../domain/assets.js";
import { chart, specKey } from "../../domain/chart.js";
import { MAX_UNPAID_ATTEMPTS } from "../../domain/payouts.js";
import type { TransferInput } from "../../domain/transfers.js";
import { createAsset } from "../../services/create-asset.js";
import { confirmPayouts } from "../../services/confirm-payouts.js";
import { requeue, tokenOf, vaultRoom, type BatchRow, type PayoutContext, type Receipt } from "./context.js";

/** Step 5: a receipt buried under enough blocks, whose block is still canonical, is finished. */
export async function settleReceipt(ctx: PayoutContext, chain: EvmChain, b: BatchRow, receipt: Receipt, head: bigint): Promise<void> {
  if (head - receipt.blockNumber + 1n < BigInt(chain.settings.confirmations)) return;
  // The node's receipt is from its canonical chain, but a reorg may land between calls: check again.
  if ((await chain.blockHash(receipt.blockNumber)) !== receipt.blockHash) return;
  await finish(ctx, chain, b, receipt);
}

/** A mined, buried, canonical receipt: confirm the payouts (success) or end them unpaid (revert). */
async function finish(ctx: PayoutContext, chain: EvmChain, b: BatchRow, receipt: Receipt): Promise<void> {
  const native = await nativeAsset(ctx, chain);
  const fee = receipt.gasUsed * receipt.effectiveGasPrice;
  if (receipt.status !== "success") {
    await endUnpaid(ctx, chain, b, "reverted on chain", { receipt, fee, native });
    return;
  }
  const payouts = await listPayoutsInFlightOfChainTx(ctx.db, b.id);
  const asset = (await getAsset(ctx.db, b.asset_id))!;
  const token = tokenOf(asset) ?? ZERO_ADDRESS;
  const events = chain.paidEvents(receipt);
  const details = new Map<string, { txHash: string; blockNumber: bigint; logIndex: number }>();
  const mismatches: string[] = [];
  for (const p of payouts) {
    const ev = events.find((e) => e.payoutId === p.id);
    if (!ev || ev.amount !== p.amount || ev.recipient !== p.toAddress || ev.token !== token) mismatches.push(p.id);
    else details.set(p.id, { txHash: receipt.transactionHash, blockNumber: receipt.blockNumber, logIndex: ev.logIndex });
  }
  if (mismatches.length > 0) {
    // Never expected (the vault emits what it was told to pay): stop and let a human look.
    await recordChainTxError(ctx.db, b.id, `Paid events do not match payouts ${mismatches.join(", ")}`);
    ctx.log.error(
      { worker: "payouts", chain_tx: b.id, tx_hash: receipt.transactionHash, payouts: mismatches },
      "mined transaction's events do not match its payouts; not confirmed",
    );
    return;
  }
  ctx.fault("before_settle");
  const accounts = await gasAccounts(ctx, chain, native);
  await confirmPayouts(ctx.db, {
    payouts,
    details,
    from: ["signed", "submitted"],
    extra: gasTransfer(chain, native, b.id, fee, accounts),
    alsoInTx: async (tx) => {
      await markChainTxConfirmed(tx, b.id, receipt, fee);
    },
  });
  ctx.log.info({ worker: "payouts", chain_tx: b.id, tx_hash: receipt.transactionHash, payouts: payouts.length }, "payouts confirmed");
  ctx.fault("after_settle");
}

/**
 * The transaction ended without paying: payouts it carried alone fail (it was theirs to fail);
 * payouts of a larger batch go back to the queue to be tried again, isolated by simulation, and
 * fail once they have ridden MAX_UNPAID_ATTEMPTS such transactions. Gas spent is booked.
 */
export async function endUnpaid(
  ctx: PayoutContext,
  chain: EvmChain,
  b: BatchRow,
  reason: string,
  mined: { receipt: Receipt; fee: bigint; native: Asset } | null,
) {
  const rows = await listUnpaidCandidates(ctx.db, b.id);
  // A batch that reverted because the vault was short (the vault paid out by other means
  // meanwhile) fails nobody's payout: all wait for funds, and the attempt is not counted.
  const asset = (await getAsset(ctx.db, b.asset_id))!;
  const short = mined !== null && (await vaultRoom(ctx, chain, asset, b.id)) < rows.reduce((n, r) => n + BigInt(r.amount), 0n);
  const alone = rows.length === 1 && mined !== null && !short;
  const toFail = short ? [] : rows.filter((r) => alone || r.unpaid_attempts + 1 >= MAX_UNPAID_ATTEMPTS).map((r) => r.id);
  if (short) reason = `${reason}: the vault is short of funds`;
  const accounts = mined ? await gasAccounts(ctx, chain, mined.native) : new Map<string, string>();
  let moved = false;
  await writeTransfers(
    ctx.db,
    async (tx) => {
      moved = (await lockChainTxStatus(tx, b.id)) === "submitted";
      if (!moved) return [];
      const holds = await lockInFlightPayoutHolds(tx, toFail);
      return [
        ...holds.map((h): TransferInput => ({
          kind: "void_pending",
          pendingId: h.hold_transfer_id,
          idempotencyKey: `payout:${h.id}:void`,
          metadata: { payout: { id: h.id, reason } },
        })),
        ...(mined ? gasTransfer(chain, mined.native, b.id, mined.fee, accounts) : []),
      ];
    },
    {
      afterWrite: async (tx, outcomes) => {
        for (const o of outcomes) if (o.kind === "refused") throw o.error;
        if (!moved) return;
        if (toFail.length > 0) {
          await markInFlightPayoutsFailed(tx, toFail, reason);
          await recordPayoutEvents(tx, toFail, "failed", ctx.now(), { reason, chain_tx_id: b.id });
        }
        await requeue(ctx, tx, b.id, ["signed", "submitted"], !short, reason);
        await markChainTxFailed(tx, b.id, reason, mined);
      },
    },
  );
  if (moved)
    ctx.log.warn(
      { worker: "payouts", chain_tx: b.id, reason, failed: toFail.length, requeued: rows.length - toFail.length },
      "chain transaction ended without paying",
    );
}

async function nativeAsset(ctx: PayoutContext, chain: EvmChain): Promise<Asset> {
  let asset = ctx.nativeAssets.get(chain.chainId);
  if (!asset) {
    // By identity (the chain's native token), not by code: two chains may both call theirs "ETH".
    const found = await findNativeAsset(ctx.db, chain.chainId);
    const n = chain.settings.native_asset;
    asset = found ? found : await createAsset(ctx.db, { code: n.code, scale: n.decimals, settlement: { kind: "native", chainId: Number(chain.chainId) } });
    ctx.nativeAssets.set(chain.chainId, asset);
  }
  return asset;
}

function gasTransfer(chain: EvmChain, native: Asset, chainTxId: string, fee: bigint, accounts: Map<string, string>): TransferInput[] {
  if (fee === 0n) return [];
  return [
    {
      kind: "standard",
      idempotencyKey: `chain-tx:${chainTxId}:gas`,
      metadata: { chain_tx: { id: chainTxId } },
      legs: [
        {
          debitAccountId: accounts.get(specKey(chart.gasExpense(native.id, chain.chainId.toString())))!,
          creditAccountId: accounts.get(specKey(chart.treasury(native.id, chain.chainId.toString())))!,
          amount: fee,
        },
      ],
    },
  ];
}

async function gasAccounts(ctx: PayoutContext, chain: EvmChain, native: Asset) {
  return ensureAccounts(ctx.db, [chart.gasExpense(native.id, chain.chainId.toString()), chart.treasury(native.id, chain.chainId.toString())]);
}
