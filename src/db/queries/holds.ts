import type { Queryable } from "../client.js";

export type HoldRow = {
  id: string; marketplace_id: string; customer_id: string; asset_id: string; amount: string; escrow_account_id: string;
  open_transfer_id: string; status: "open" | "closed" | "expired"; expires_at: Date | string | null; closed_at: Date | string | null;
  close_transfer_id: string | null; created_at: Date | string;
};

export async function getHoldRow(db: Queryable, id: string): Promise<HoldRow | undefined> {
  const rows = await db.query<HoldRow>("select * from holds where id = $1", [id]);
  return rows[0];
}

/** Records an open hold, in the transaction of the transfer that moved its funds into escrow. */
export async function insertHold(
  tx: Queryable,
  h: {
    id: string; marketplaceId: string; customerId: string; assetId: string; amount: bigint; escrowAccountId: string | undefined;
    openTransferId: string; expiresAt: string | null; createdAt: Date;
  },
): Promise<void> {
  await tx.query(
    `insert into holds (id, marketplace_id, customer_id, asset_id, amount, escrow_account_id, open_transfer_id, status, expires_at, created_at)
         values ($1, $2, $3, $4, $5, $6, $7, 'open', $8, $9)`,
    [h.id, h.marketplaceId, h.customerId, h.assetId, h.amount.toString(), h.escrowAccountId, h.openTransferId, h.expiresAt, h.createdAt.toISOString()]);
}

/** The id of the hold that this transfer opened. */
export async function findHoldIdByOpenTransfer(db: Queryable, transferId: string): Promise<string | undefined> {
  const rows = await db.query<{ id: string }>("select id from holds where open_transfer_id = $1", [transferId]);
  return rows[0]?.id;
}

/** Marks a hold closed (or expired) if it is still open; a hold no longer open is left as it is. */
export async function markHoldClosed(db: Queryable, id: string, reason: "closed" | "expired", at: Date): Promise<void> {
  await db.query("update holds set status = $2, closed_at = $3 where id = $1 and status = 'open'", [id, reason, at.toISOString()]);
}

/** Records the transfer that returned the hold's escrow to the customer, unless one is recorded already. */
export async function recordHoldCloseTransfer(db: Queryable, id: string, transferId: string): Promise<void> {
  await db.query("update holds set close_transfer_id = coalesce(close_transfer_id, $2) where id = $1", [id, transferId]);
}

/**
 * Up to `limit` holds to close: open ones whose time is up at `now`, and those marked closed whose
 * escrow still holds funds.
 */
export async function listHoldsDueForClosing(db: Queryable, limit: number, now: Date): Promise<{ id: string; status: "open" | "closed" | "expired" }[]> {
  return db.query<{ id: string; status: "open" | "closed" | "expired" }>(
    `select h.id, h.status from holds h
      where (h.status = 'open' and h.expires_at <= $2::timestamptz)
         or (h.status <> 'open' and exists (select 1 from account_balances b
                                             where b.account_id = h.escrow_account_id and b.credits_posted > b.debits_posted))
      limit $1`, [limit, now.toISOString()]);
}
