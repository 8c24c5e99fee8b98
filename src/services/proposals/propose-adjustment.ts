import type { Queryable } from "../../db/client.js";
import { findOpenAdjustmentProposal, lockItemAdjustment } from "../../db/queries/proposals.js";
import { getItemResolution, itemsOfDiscrepancy } from "../../db/queries/reconciliations.js";
import { LedgerError } from "../../domain/errors.js";
import { checkAdjustment } from "../reconcile.js";
import { mayPropose, recordProposal, type Proposal, type Proposing } from "./proposal.js";

export interface AdjustmentInput {
  runId: string;
  itemId: bigint;
  note: string;
  adjustment: { debitAccountId: string; creditAccountId: string; amount: bigint };
}

/**
 * Proposes to resolve a reconciliation item with an adjusting transfer. The adjustment is checked
 * now (the item's kind has a discrepancy, the accounts are the ones it concerns, at most its
 * amount) and again when it is approved; the item stays open until then. One open proposal per
 * discrepancy (items of several runs can show the same one).
 */
export async function proposeAdjustment(db: Queryable, { now, by, ...input }: Proposing<AdjustmentInput>): Promise<Proposal> {
  mayPropose(by, "reconciliation_adjustment");
  const item = await getItemResolution(db, input.runId, input.itemId);
  if (!item) throw new LedgerError("reconciliation_item_not_found", `item ${input.itemId} of reconciliation ${input.runId} does not exist`);
  if (item.resolved_at !== null) throw new LedgerError("item_already_resolved", `item ${input.itemId} was resolved already`);
  const { key, discrepancy } = await checkAdjustment(db, input.runId, input.itemId, input.adjustment);
  // One open proposal per discrepancy, whichever run's item it was made for (runs over the same blocks show the same one).
  await lockItemAdjustment(db, key);
  const open = await findOpenAdjustmentProposal(db, await itemsOfDiscrepancy(db, discrepancy));
  if (open !== undefined) {
    const other = open.item_id === input.itemId.toString() ? "" : `, made for item ${open.item_id}, which shows the same discrepancy`;
    throw new LedgerError("item_already_resolved", `item ${input.itemId} has an adjustment waiting for approval already (proposal ${open.id}${other})`);
  }
  return recordProposal(db, now, by, "reconciliation_adjustment", null, {
    reconciliation_id: input.runId,
    item_id: input.itemId.toString(),
    note: input.note,
    adjustment: {
      debit_account_id: input.adjustment.debitAccountId,
      credit_account_id: input.adjustment.creditAccountId,
      amount: input.adjustment.amount.toString(),
    },
  });
}
