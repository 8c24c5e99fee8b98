// Whether the ledger records a payment into the vault already, for adjustments of reconciliation items.
import type { Queryable } from "../db/client.js";
import { depositOfTransfer } from "../db/queries/deposits.js";
import { receiptProposalsByReferenceKeys } from "../db/queries/proposals.js";
import { LedgerError } from "../domain/errors.js";
import { lockReceivedTransactions } from "./chain-deposits.js";

/**
 * What records a transfer into the vault in the ledger already, if anything: its credit to a
 * customer as a deposit, or a receipt proposal of the asset (proposed or approved) naming its
 * transaction, which records it when approved. An adjustment of a reconciliation item showing the
 * transfer would record the same money a second time. Read under the transaction's lock
 * (lockReceivedTransactions) to be final.
 */
export async function inflowRecordedBy(db: Queryable, t: InflowKey): Promise<string | undefined> {
  const hash = t.txHash.toLowerCase();
  const deposit = await depositOfTransfer(db, t.chainId, hash, t.logIndex);
  if (deposit) return `credited to customer ${deposit.customer_id} of marketplace ${deposit.marketplace_id} as a deposit`;
  const [receipt] = await receiptProposalsByReferenceKeys(db, [hash], t.assetId);
  if (receipt) return `recorded as a receipt by proposal ${receipt.id} (${receipt.status})`;
  return undefined;
}

/**
 * A run keeps what it saw: a payment into the vault not credited then stays `unexpected_on_chain`
 * in that run after the ledger has recorded it (credited as a deposit once a receipt proposal naming
 * it was rejected, or the sender registered; recorded by an approved receipt). Adjusting it then
 * would book the same money twice, so it is refused, as it is while a receipt proposal names it.
 */
export async function refuseRecordedInflow(db: Queryable, itemId: bigint, inflow: InflowKey | null, locked: boolean): Promise<void> {
  if (inflow === null) return;
  // `locked`: inside the adjustment's transaction, under the lock the deposit scanner and a receipt
  // proposal take per transaction hash, so that a credit or receipt meanwhile is seen here and
  // they see the adjustment.
  if (locked) await lockReceivedTransactions(db, [inflow.txHash]);
  const by = await inflowRecordedBy(db, inflow);
  if (by === undefined) return;
  const message = `item ${itemId} shows transfer ${inflow.txHash.toLowerCase()} (log ${inflow.logIndex}), which the ledger records already (${by}): there is nothing to adjust; resolve the item with a note`;
  throw new LedgerError("invalid_request", message, [{ path: "adjustment", message: "the payment is recorded already" }]);
}

/** The transfer into the vault a reconciliation item shows, if it shows one. */
export function inflowOf(item: { direction: string; chain_id: string; asset_id: string; tx_hash: string | null; log_index: number | null }): InflowKey | null {
  return item.direction === "in" && item.tx_hash !== null && item.log_index !== null
    ? { chainId: item.chain_id, assetId: item.asset_id, txHash: item.tx_hash, logIndex: item.log_index }
    : null;
}

/** A transfer into the vault: its chain, asset, transaction and log. */
export type InflowKey = { chainId: string; assetId: string; txHash: string; logIndex: number };
