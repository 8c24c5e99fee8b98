import type { Database } from "../db/client.js";
import { getPayout, type Payout } from "../db/queries/payouts.js";
import type { WriteReceipt } from "../db/queries/write-receipts.js";
import { LedgerError } from "../domain/errors.js";
import { failPayouts } from "./fail-payouts.js";

/** Cancels a payout that no chain transaction has taken yet. */
export async function cancelPayout(db: Database, { id, by, receipt }: { id: string; by: string; receipt?: WriteReceipt<void> }): Promise<Payout> {
  const p = await getPayout(db, id);
  if (!p) throw new LedgerError("payout_not_found", `payout ${id} does not exist`);
  const failed = await failPayouts(db, { ids: [id], reason: `cancelled by ${by}`, from: ["pending"], receipt });
  if (failed.length === 0) {
    const now = (await getPayout(db, id))!;
    throw new LedgerError("payout_not_pending", `payout ${id} is ${now.status}: only pending payouts can be cancelled`);
  }
  return (await getPayout(db, id))!;
}
