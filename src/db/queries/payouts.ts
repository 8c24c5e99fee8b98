import type { PayoutStatus } from "../../domain/payouts.js";
import type { Queryable } from "../client.js";
import { pgArray } from "../sql-arrays.js";

/** Appends one event per payout to their history. */
export async function recordPayoutEvents(tx: Queryable, ids: string[], status: PayoutStatus, at: Date, detail: Record<string, unknown> = {}): Promise<void> {
  if (ids.length === 0) return;
  await tx.query(
    "insert into payout_events (payout_id, status, detail, at) select unnest($1::uuid[]), $2, $3::text::jsonb, $4",
    [pgArray(ids), status, JSON.stringify(detail), at.toISOString()]);
}
