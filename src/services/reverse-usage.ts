import type { WriteReceipt } from "../db/queries/write-receipts.js";
import { LedgerError } from "../domain/errors.js";
import type { Database, Queryable } from "../db/client.js";
import { getUsage } from "../db/queries/usage.js";
import { type UsageRecord } from "../domain/usage.js";
import { writeTransfers } from "../db/transfer-writer.js";
import { chart } from "../domain/chart.js";
import { getAsset } from "../db/queries/assets.js";
import { getServiceAccountAvailable } from "../db/queries/accounts.js";
import { unitsToDecimal } from "../domain/money.js";
import { awaitingFunds, lockOperatorFunds } from "./funding.js";
import { closeHold, getHold } from "./holds.js";

/**
 * A reversal takes the record's net back from the operator. What the operator was paid out must
 * stay covered by funded earnings: otherwise the record's money, returned to the customer, would
 * fund new usage and be paid out a second time. So the operator's available balance after the
 * reversal must still hold what waits for funds once the record is gone.
 */
async function keepsPaidOutFunded(tx: Queryable, usage: UsageRecord): Promise<void> {
  if (usage.status === "reversed") return; // answered as already reversed by the ledger
  await lockOperatorFunds(tx, usage.operatorId, usage.assetId);
  const available = await getServiceAccountAvailable(tx, usage.assetId, chart.operatorPayable(usage.assetId, usage.operatorId).ref);
  const after = (available ?? 0n) - usage.net;
  if (after < 0n) return; // refused by the payable's no-overdraft limit, as before
  const awaiting = await awaitingFunds(tx, usage.operatorId, usage.assetId, { withoutUsageId: usage.id });
  if (after < awaiting.total) {
    const asset = (await getAsset(tx, usage.assetId))!;
    throw new LedgerError(
      "exceeds_credits",
      `reversing usage record ${usage.id} would take back ${unitsToDecimal(usage.net, asset.scale)} ${asset.code} of operator ${usage.operatorId}'s funded earnings, ` +
        `which it has already been paid out or is being paid: what is left (${unitsToDecimal(after, asset.scale)}) is less than its earnings still awaiting funds (${unitsToDecimal(awaiting.total, asset.scale)})`,
    );
  }
}

/**
 * Corrects a usage record by reversing its ledger transfer, once, with the reason recorded on the
 * reversal. The record itself stays as it was (history is not rewritten); its status reads
 * `reversed`. Like any transfer, the reversal obeys the limits: if the operator has already been paid
 * out the net, it is refused (exceeds_credits) and must be recovered another way.
 */
export async function reverseUsage(
  db: Database,
  { usage, reason, idempotencyKey, receipt }: { usage: UsageRecord; reason: string; idempotencyKey: string; receipt?: WriteReceipt<void> },
): Promise<{ record: UsageRecord; reversalId: string; replayed: boolean }> {
  const [r] = await writeTransfers(
    db,
    async (tx) => {
      await keepsPaidOutFunded(tx, usage);
      return [
        {
          kind: "reversal",
          reversesId: usage.transferId,
          idempotencyKey,
          metadata: { usage_reversal: { usage_id: usage.id, external_id: usage.externalId, reason } },
        },
      ];
    },
    { receipt },
  );
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
    if (hold && hold.status !== "open") await closeHold(db, { id: hold.id, reason: hold.status });
  }
  return { record: (await getUsage(db, usage.id))!, reversalId: r!.transfer.id, replayed: r!.replayed };
}
