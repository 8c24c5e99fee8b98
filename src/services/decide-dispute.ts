import type { Database, Queryable } from "../db/client.js";
import { decideDisputeRow, disputeItemRows, getDisputeRow, insertDisputeEvent, type DisputeRow } from "../db/queries/disputes.js";
import { getUsage } from "../db/queries/usage.js";
import { writeReceipts, type WriteReceipt } from "../db/queries/write-receipts.js";
import type { Principal } from "../domain/access.js";
import type { Dispute } from "../domain/disputes.js";
import { LedgerError } from "../domain/errors.js";
import type { UsageRecord } from "../domain/usage.js";
import { getDispute } from "./disputes.js";
import { independentKeys } from "./proposals/decision.js";
import { recoverFromEarnings } from "./receivables.js";
import { reverseUsages } from "./reverse-usage.js";

/**
 * Deciding a dispute (docs/reconciliation.md, "Disputes"): finance or an admin, never the key that
 * opened it, upholds it — its records are reversed through the usage reversal service (customers
 * refunded, fees reversed, the operators' earnings taken back; what an operator was already paid
 * becomes its receivable) — or rejects it, which releases the earnings it held. Once.
 */

export interface Decision {
  id: string;
  by: Principal;
  note: string | null;
  /** The receipt (audit row) of the API call, written with the decision. */
  receipt?: WriteReceipt<void>;
}

/** The dispute, still open, and decided by another key than the one that opened it. */
function mayDecide(row: DisputeRow | undefined, id: string, by: Principal): DisputeRow {
  if (!row) throw new LedgerError("dispute_not_found", `dispute ${id} does not exist`);
  if (row.status !== "open") throw new LedgerError("dispute_decided", `dispute ${id} was already ${row.status} by key ${row.decided_by}`);
  if (row.opened_by === by.keyId) throw new LedgerError("four_eyes", `dispute ${id} must be decided by another key than the one that opened it`);
  return row;
}

/**
 * An upheld dispute may take back earnings already paid out (the operator's receivable), so its
 * decision is four eyes as a proposal's: by a key independent of the opener's (neither created the
 * other, no creator in common but the bootstrap key), whatever the opener's role. A marketplace's
 * key minted by an admin is that admin's as much as the marketplace's: before, the admin opened a
 * dispute with it and upheld it alone (tests/integration/disputes.test.ts, "a marketplace key an
 * admin minted").
 */
async function independentOfOpener(db: Queryable, row: DisputeRow, by: Principal): Promise<void> {
  await independentKeys(db, { what: `dispute ${row.id}`, first: row.opened_by, verb: "opened" }, by);
}

/** Records the decision in the caller's transaction: the dispute's row (if still open), its items closed, its event. */
async function record(tx: Queryable, d: Decision, status: "upheld" | "rejected", at: Date, detail: Record<string, unknown>): Promise<void> {
  const row = await decideDisputeRow(tx, { id: d.id, status, by: d.by.keyId, at, note: d.note });
  if (!row) throw new LedgerError("dispute_decided", `dispute ${d.id} was decided by another key meanwhile`);
  await insertDisputeEvent(tx, { disputeId: d.id, status, at, by: d.by.keyId, detail: { note: d.note, ...detail } });
  if (d.receipt) await writeReceipts(tx, [{ receipt: d.receipt, result: undefined }], at);
}

/**
 * Upholds a dispute: every record reversed and the decision recorded in one database transaction
 * (one refused reversal, e.g. a record whose period is being closed, and nothing is written). The
 * reversals' keys come from the dispute, not from the request, so a retry after a crash writes them
 * once. Where an operator's payable cannot give back the net (it was paid out), the shortfall is
 * booked to its receivable (receivables.ts).
 */
export async function upholdDispute(db: Database, d: Decision): Promise<Dispute> {
  const row = mayDecide(await getDisputeRow(db, d.id), d.id, d.by);
  await independentOfOpener(db, row, d.by);
  const usages: UsageRecord[] = [];
  for (const i of await disputeItemRows(db, [d.id])) usages.push((await getUsage(db, i.usage_id))!);
  const key = `dispute-uphold:${d.id}`;
  await reverseUsages(
    db,
    usages.map((usage) => ({ usage, reason: `dispute ${d.id} upheld: ${row.reason}`, idempotencyKey: `${key}:${usage.id}` })),
    {
      clawbackKey: key,
      disputeId: d.id,
      afterWrite: async (tx, outcomes, at) => {
        const created = outcomes.flatMap((o) => (o.kind === "created" ? [o.transfer.id] : []));
        await record(tx, d, "upheld", at, { transfers: created });
      },
    },
  );
  return (await getDispute(db, d.id, d.by))!;
}

/** Rejects a dispute, in the caller's transaction: its earnings are released (payable again, after any receivable). */
export async function rejectDispute(tx: Queryable, d: Decision & { now: Date }): Promise<Dispute> {
  await independentOfOpener(tx, mayDecide(await getDisputeRow(tx, d.id, true), d.id, d.by), d.by);
  await record(tx, { ...d, receipt: undefined }, "rejected", d.now, {});
  return (await getDispute(tx, d.id, d.by))!;
}

/** Once a rejection has committed: the released earnings pay back what their operators owe first. */
export async function afterRelease(db: Database, dispute: Dispute): Promise<void> {
  await recoverFromEarnings(db, [...new Set(dispute.items.map((i) => i.operatorId))]);
}
