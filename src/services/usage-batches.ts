import type { Queryable } from "../db/client.js";
import { insertUsageBatch, type NewUsageBatch } from "../db/queries/usage-batches.js";
import { uuidv7 } from "../domain/ids.js";

export { getUsageBatchRow, listUsageBatchRejections, listUsageBatchRows } from "../db/queries/usage-batches.js";
export type { NewUsageBatch, UsageBatchRejectionRow, UsageBatchRow } from "../db/queries/usage-batches.js";

/** The longest reason a batch's log keeps of a refused record (the answer itself has the whole problem). */
export const MAX_REJECTION_REASON = 500;

/** A new batch id: `ub_` and a UUID. */
export function newUsageBatchId(): string {
  return `ub_${uuidv7()}`;
}

/**
 * Writes a batch's log: in the transaction of its records (`tx`), or on its own when the batch
 * wrote no record (every record refused or a duplicate). Returns the batch's id: the log already
 * written for the same marketplace, tenant and Idempotency-Key, if there is one.
 */
export async function recordUsageBatch(db: Queryable, batch: NewUsageBatch): Promise<string> {
  const bounded = {
    ...batch,
    rejections: batch.rejections.map((r) => ({ ...r, reason: cap(r.reason, MAX_REJECTION_REASON), field: r.field && cap(r.field, 200) })),
  };
  // One statement (the log and its rejections), atomic on its own.
  return insertUsageBatch(db, bounded);
}

function cap(s: string, n: number): string {
  return s.length <= n ? s : s.slice(0, n - 1) + "…";
}
