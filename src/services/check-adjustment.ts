// Whether an adjusting transfer may resolve a reconciliation item (src/services/reconcile.ts, resolveItem).
import type { Queryable } from "../db/client.js";
import { adjustedElsewhere, getAdjustmentAccounts, getItemToAdjust, type Discrepancy, type ItemToAdjustRow } from "../db/queries/reconciliations.js";
import { LedgerError } from "../domain/errors.js";
import { inflowOf, refuseRecordedInflow, type InflowKey } from "./recorded-inflows.js";

/**
 * Checks an adjustment of an item (see resolveItem) and that no item of any run showing the same
 * discrepancy was adjusted already; returns the adjustment's idempotency key, the discrepancy's:
 * the chain, asset and on-chain transfer (or, for a payment that never happened, the payout).
 */
export async function checkAdjustment(
  db: Queryable,
  runId: string,
  itemId: bigint,
  a: { debitAccountId: string; creditAccountId: string; amount: bigint },
): Promise<{ key: string; discrepancy: Discrepancy; inflow: InflowKey | null }> {
  const item = await getItemToAdjust(db, runId, itemId);
  const refuse = (message: string, path: string) => {
    throw new LedgerError("invalid_request", message, [{ path: `adjustment.${path}`, message }]);
  };
  if (item!.status === "matched") refuse(`item ${itemId} is matched: there is no discrepancy to adjust`, "amount");
  // A payment to the wrong recipient leaves the treasury right: what is owed is the operator's, not a treasury adjustment.
  if (item!.status === "recipient_mismatch")
    refuse(`item ${itemId} is a payment to another recipient: the treasury is right, so there is nothing to adjust here; resolve it with a note`, "amount");
  const ledger = BigInt(item!.ledger_amount ?? "0");
  const chain = BigInt(item!.chain_amount ?? "0");
  const gap = item!.status === "amount_mismatch" ? (chain > ledger ? chain - ledger : ledger - chain) : item!.status === "unexpected_on_chain" ? chain : ledger;
  if (a.amount > gap) refuse(`the adjustment of ${a.amount} exceeds the item's discrepancy of ${gap}`, "amount");
  const accounts = await getAdjustmentAccounts(db, [a.debitAccountId, a.creditAccountId]);
  const byId = new Map(accounts.map((x) => [x.id, x]));
  const isTreasury = (id: string) => {
    const x = byId.get(id);
    return x !== undefined && x.opened_by_service && x.marketplace_id === null && x.asset_id === item!.asset_id && x.ref === `treasury:${item!.chain_id}`;
  };
  const debitTreasury = isTreasury(a.debitAccountId);
  const creditTreasury = isTreasury(a.creditAccountId);
  if (debitTreasury === creditTreasury) {
    refuse(
      `an adjustment moves money between the run's treasury account (treasury:${item!.chain_id}) and an account of the platform's books, not of the service's chart`,
      debitTreasury ? "credit_account_id" : "debit_account_id",
    );
  }
  // The side of the treasury follows the discrepancy: more on chain than booked (an inflow the ledger
  // does not know, a payout booked but never sent, one sent for less) debits it; less on chain
  // (an outflow the ledger does not know, a payout sent for more) credits it.
  const onChainMore = item!.status === "unexpected_on_chain" ? item!.direction === "in" : item!.status === "missing_on_chain" ? true : chain < ledger;
  if (debitTreasury !== onChainMore) {
    refuse(
      `the chain holds ${onChainMore ? "more" : "less"} than the ledger for this item: the adjustment ${onChainMore ? "debits" : "credits"} the treasury`,
      onChainMore ? "debit_account_id" : "credit_account_id",
    );
  }
  const other = debitTreasury ? "credit_account_id" : "debit_account_id";
  const counter = byId.get(debitTreasury ? a.creditAccountId : a.debitAccountId);
  if (!counter) refuse("the account does not exist", other);
  if (counter!.opened_by_service || counter!.marketplace_id !== null) {
    refuse(
      `account ${counter!.ref ?? counter!.id} is not an account of the platform's books (an equity, suspense or loss account an admin opened): adjustments cannot credit or debit operators, customers, marketplaces or fees`,
      other,
    );
  }
  // A payment into the vault is booked whole or not at all: once adjusted, the scanner and later
  // runs take it as recorded (one adjustment per payment), so a part would leave the rest in no account.
  if (item!.status === "unexpected_on_chain" && item!.direction === "in" && a.amount !== gap)
    refuse(`item ${itemId} is a payment of ${gap} into the vault: an adjustment books all of it (${gap}), or none; resolve it with a note otherwise`, "amount");
  const inflow = inflowOf(item!);
  await refuseRecordedInflow(db, itemId, inflow, false);
  return { ...(await notAdjustedElsewhere(db, itemId, item!)), inflow };
}

/** The item's discrepancy and the key of its adjustment, once no item of any run showing it was adjusted already. */
async function notAdjustedElsewhere(db: Queryable, itemId: bigint, item: ItemToAdjustRow): Promise<{ key: string; discrepancy: Discrepancy }> {
  const discrepancy: Discrepancy = {
    chainId: item.chain_id,
    assetId: item.asset_id,
    txHash: item.tx_hash,
    logIndex: item.log_index,
    payoutId: item.payout_id,
  };
  const done = await adjustedElsewhere(db, discrepancy);
  if (done) {
    const what = item.tx_hash !== null ? `transfer ${item.tx_hash} (log ${item.log_index})` : `payout ${item.payout_id}`;
    throw new LedgerError(
      "item_already_resolved",
      `the discrepancy of item ${itemId} (${what}) was adjusted already, by item ${done.id} of reconciliation ${done.reconciliation_id} (transfer ${done.adjustment_transfer_id}): resolve this item with a note (reject its adjustment proposal first, if one waits)`,
    );
  }
  const identity = item.tx_hash !== null ? `tx:${item.tx_hash}:${item.log_index}` : `payout:${item.payout_id}`;
  return { key: `reconciliation-adjustment:${item.chain_id}:${item.asset_id}:${identity}`, discrepancy };
}
