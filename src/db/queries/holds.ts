import { and, asc, eq, gt, sql } from "drizzle-orm";
import type { Queryable } from "../client.js";
import { orm, run } from "../orm.js";
import { assets, holds } from "../schema/index.js";

export type HoldRow = {
  id: string;
  marketplace_id: string;
  customer_id: string;
  asset_id: string;
  /** The asset's decimals, for display. */
  asset_scale: number;
  amount: string;
  escrow_account_id: string;
  open_transfer_id: string;
  status: "open" | "closed" | "expired";
  expires_at: Date | string | null;
  closed_at: Date | string | null;
  close_transfer_id: string | null;
  created_at: Date | string;
};

const holdColumns = {
  id: holds.id,
  marketplace_id: holds.marketplaceId,
  customer_id: holds.customerId,
  asset_id: holds.assetId,
  asset_scale: assets.scale,
  amount: holds.amount,
  escrow_account_id: holds.escrowAccountId,
  open_transfer_id: holds.openTransferId,
  status: sql<HoldRow["status"]>`${holds.status}`,
  expires_at: holds.expiresAt,
  closed_at: holds.closedAt,
  close_transfer_id: holds.closeTransferId,
  created_at: holds.createdAt,
};

export async function getHoldRow(db: Queryable, id: string): Promise<HoldRow | undefined> {
  const rows = await run(orm(db).select(holdColumns).from(holds).innerJoin(assets, eq(assets.id, holds.assetId)).where(eq(holds.id, id)));
  return rows[0];
}

/** Records an open hold, in the transaction of the transfer that moved its funds into escrow. */
export async function insertHold(
  tx: Queryable,
  h: {
    id: string;
    marketplaceId: string;
    customerId: string;
    assetId: string;
    amount: bigint;
    escrowAccountId: string | undefined;
    openTransferId: string;
    expiresAt: string | null;
    createdAt: Date;
  },
): Promise<void> {
  await run(
    orm(tx)
      .insert(holds)
      .values({
        id: h.id,
        marketplaceId: h.marketplaceId,
        customerId: h.customerId,
        assetId: h.assetId,
        amount: h.amount.toString(),
        escrowAccountId: h.escrowAccountId!,
        openTransferId: h.openTransferId,
        status: "open",
        expiresAt: h.expiresAt === null ? null : new Date(h.expiresAt),
        createdAt: h.createdAt,
      }),
  );
}

/** The id of the hold that this transfer opened. */
export async function findHoldIdByOpenTransfer(db: Queryable, transferId: string): Promise<string | undefined> {
  const rows = await run(orm(db).select({ id: holds.id }).from(holds).where(eq(holds.openTransferId, transferId)));
  return rows[0]?.id;
}

/** Marks a hold closed (or expired) if it is still open; a hold no longer open is left as it is. */
export async function markHoldClosed(db: Queryable, id: string, reason: "closed" | "expired", at: Date): Promise<boolean> {
  const rows = await run(
    orm(db)
      .update(holds)
      .set({ status: reason, closedAt: at })
      .where(and(eq(holds.id, id), eq(holds.status, "open")))
      .returning({ id: holds.id }),
  );
  return rows.length > 0;
}

/** Records the transfer that returned the hold's escrow to the customer, unless one is recorded already. */
export async function recordHoldCloseTransfer(db: Queryable, id: string, transferId: string): Promise<void> {
  await run(
    orm(db)
      .update(holds)
      .set({ closeTransferId: sql`coalesce(${holds.closeTransferId}, ${transferId})` })
      .where(eq(holds.id, id)),
  );
}

/**
 * Up to `limit` holds to close: open ones whose time is up at `now`, and those marked closed whose
 * escrow still holds funds.
 */
export async function listHoldsDueForClosing(db: Queryable, limit: number, now: Date): Promise<{ id: string; status: "open" | "closed" | "expired" }[]> {
  // Raw: the literal 'open' lets the planner use the partial index holds_expiry_idx (status = 'open').
  return db.query<{ id: string; status: "open" | "closed" | "expired" }>(
    `select h.id, h.status from holds h
      where (h.status = 'open' and h.expires_at <= $2::timestamptz)
         or (h.status <> 'open' and exists (select 1 from account_balances b
                                             where b.account_id = h.escrow_account_id and b.credits_posted > b.debits_posted))
      limit $1`,
    [limit, now.toISOString()],
  );
}

/** A page of holds by id, filtered (a marketplace key's reads always name its marketplace). */
export async function listHoldRows(
  db: Queryable,
  f: { marketplaceId?: string; customerId?: string; status?: HoldRow["status"]; assetId?: string; afterId?: string; limit: number },
): Promise<HoldRow[]> {
  return run(
    orm(db)
      .select(holdColumns)
      .from(holds)
      .innerJoin(assets, eq(assets.id, holds.assetId))
      .where(
        and(
          f.marketplaceId === undefined ? undefined : eq(holds.marketplaceId, f.marketplaceId),
          f.customerId === undefined ? undefined : eq(holds.customerId, f.customerId),
          f.status === undefined ? undefined : eq(holds.status, f.status),
          f.assetId === undefined ? undefined : eq(holds.assetId, f.assetId),
          f.afterId === undefined ? undefined : gt(holds.id, f.afterId),
        ),
      )
      .orderBy(asc(holds.id))
      .limit(f.limit),
  );
}
