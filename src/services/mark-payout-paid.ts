import type { Database } from "../db/client.js";
import { getPayout, type Payout } from "../db/queries/payouts.js";
import type { WriteReceipt } from "../db/queries/write-receipts.js";
import { LedgerError } from "../domain/errors.js";
import { confirmPayouts } from "./confirm-payouts.js";

/** Off-chain settlement: finance paid the operator by other means and records the reference. */
export async function markPayoutPaid(
  db: Database,
  { id, reference, receipt }: { id: string; reference: string; receipt?: WriteReceipt<void> },
): Promise<{ payout: Payout; changed: boolean }> {
  const p = await getPayout(db, id);
  if (!p) throw new LedgerError("payout_not_found", `payout ${id} does not exist`);
  if (p.settlement === "convert") {
    const detail = `payout ${id} is a convert payout: the worker converts it and pays each part as a payout of its own (GET /v1/conversions?payout_id=${id} names them); only a part that settles off-chain is marked paid`;
    throw new LedgerError("invalid_request", detail, [{ path: "id", message: "is a convert payout" }]);
  }
  if (p.settlement !== "none") {
    const detail = `payout ${id} settles on chain ${p.chainId}: the payout worker confirms it from the chain`;
    throw new LedgerError("invalid_request", detail, [{ path: "id", message: "settles on chain: only off-chain payouts are marked paid" }]);
  }
  if (p.status === "confirmed" && p.externalReference === reference) return { payout: p, changed: false };
  if (p.approval === "required")
    throw new LedgerError("payout_not_approved", `payout ${id} waits for a second key's approval (${p.note}); it cannot be marked paid before`);
  const done = await confirmPayouts(db, { payouts: [p], details: new Map([[id, { externalReference: reference }]]), from: ["pending"], receipt });
  if (done.length === 0) throw new LedgerError("payout_not_pending", `payout ${id} is ${(await getPayout(db, id))!.status}`);
  return { payout: (await getPayout(db, id))!, changed: true };
}
