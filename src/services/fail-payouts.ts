import type { Database, Queryable } from "../db/client.js";
import { lockPayoutHoldsIn, markPayoutsFailed, recordPayoutEvents } from "../db/queries/payouts.js";
import { writeTransfers, type BatchOutcome } from "../db/transfer-writer.js";
import type { PayoutStatus } from "../domain/payouts.js";
import type { TransferInput } from "../domain/transfers.js";
import type { WriteReceipt } from "../db/queries/write-receipts.js";

/**
 * Ends payouts unpaid: voids their holds (the funds return to the operators' payables) and marks
 * them failed, in one transaction with `alsoInTx`. Only payouts still in one of `from` move.
 */
export async function failPayouts(
  db: Database,
  {
    ids,
    reason,
    from,
    alsoInTx,
    receipt,
  }: {
    ids: string[];
    reason: string;
    from: PayoutStatus[];
    alsoInTx?: (tx: Queryable, failed: string[]) => Promise<void>;
    receipt?: WriteReceipt<void>;
  },
): Promise<string[]> {
  let failed: string[] = [];
  const [first] = await writeTransfers(
    db,
    async (tx) => {
      const rows = await lockPayoutHoldsIn(tx, ids, from);
      failed = rows.map((r) => r.id);
      return rows.map((r): TransferInput => ({
        kind: "void_pending",
        pendingId: r.hold_transfer_id,
        idempotencyKey: `payout:${r.id}:void`,
        metadata: { payout: { id: r.id, reason } },
      }));
    },
    {
      afterWrite: async (tx, outcomes, bookedAt) => {
        throwIfRefused(outcomes);
        if (failed.length > 0) {
          await markPayoutsFailed(tx, failed, reason, bookedAt);
          await recordPayoutEvents(tx, failed, "failed", bookedAt, { reason });
        }
        await alsoInTx?.(tx, failed);
      },
      receipt,
    },
  );
  if (first && !first.ok) throw first.error;
  return failed;
}

/** Throws the first refusal of a payout batch (payout transfers are never refused in normal operation). */
export function throwIfRefused(outcomes: BatchOutcome[]): void {
  for (const o of outcomes) if (o.kind === "refused") throw o.error;
}
