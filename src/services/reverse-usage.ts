import { LedgerError } from "../domain/errors.js";
import type { Database } from "../db/client.js";
import { getUsage, type UsageRecord } from "../db/queries/usage.js";
import { writeTransfers } from "../db/transfer-writer.js";
import { closeHold, getHold } from "./holds.js";

/**
 * Corrects a usage record by reversing its ledger transfer, once, with the reason recorded on the
 * reversal. The record itself stays as it was (history is not rewritten); its status reads
 * `reversed`. Like any transfer, the reversal obeys the limits: if the operator has already been paid
 * out the net, it is refused (exceeds_credits) and must be recovered another way.
 */
export async function reverseUsage(db: Database, usage: UsageRecord, reason: string, idempotencyKey: string): Promise<{ record: UsageRecord; reversalId: string }> {
  const [r] = await writeTransfers(db, [{
    kind: "reversal",
    reversesId: usage.transferId,
    idempotencyKey,
    metadata: { usage_reversal: { usage_id: usage.id, external_id: usage.externalId, reason } },
  }]);
  if (!r!.ok) {
    if (r!.error.code === "idempotency_conflict" || r!.error.code === "already_reversed") {
      throw new LedgerError("already_reversed", `usage record ${usage.id} was already reversed`);
    }
    throw r!.error;
  }
  // A record charged to a hold is refunded into the hold's escrow; if the hold is no longer open,
  // send that refund on to the customer, as closing the hold would have.
  if (usage.holdId !== null) {
    const hold = await getHold(db, usage.holdId);
    if (hold && hold.status !== "open") await closeHold(db, hold.id, hold.status);
  }
  return { record: (await getUsage(db, usage.id))!, reversalId: r!.transfer.id };
}
