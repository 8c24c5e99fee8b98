import type { Queryable } from "../client.js";
import { pgArray, pgColumns } from "../sql-arrays.js";

/** Disputes of usage records, their items and events, and marketplaces' dispute windows (src/services/disputes.ts). */

export interface DisputeRow {
  id: string;
  marketplace_id: string;
  status: "open" | "upheld" | "rejected";
  reason: string;
  opened_by: string;
  opened_at: Date;
  decided_by: string | null;
  decided_at: Date | null;
  decision_note: string | null;
}

export interface DisputeItemRow {
  dispute_id: string;
  usage_id: string;
  external_id: string;
  operator_id: string;
  asset_id: string;
  asset: string;
  scale: number;
  net: string;
  gross: string;
  reversed: boolean;
}

const DISPUTE = "d.id, d.marketplace_id, d.status, d.reason, d.opened_by, d.opened_at, d.decided_by, d.decided_at, d.decision_note";

export async function insertDispute(tx: Queryable, d: { id: string; marketplaceId: string; reason: string; openedBy: string; openedAt: Date }): Promise<void> {
  await tx.query("insert into disputes (id, marketplace_id, status, reason, opened_by, opened_at) values ($1, $2, 'open', $3, $4, $5)", [
    d.id,
    d.marketplaceId,
    d.reason,
    d.openedBy,
    d.openedAt.toISOString(),
  ]);
}

export async function insertDisputeItems(
  tx: Queryable,
  disputeId: string,
  items: Array<{ usageId: string; operatorId: string; assetId: string; net: bigint }>,
): Promise<void> {
  const columns = await pgColumns(items, [(i) => i.usageId, (i) => i.operatorId, (i) => i.assetId, (i) => i.net.toString()], { giveWay: false });
  await tx.query(
    `insert into dispute_items (dispute_id, usage_id, operator_id, asset_id, net)
     select $1, u, o, a, n from unnest($2::uuid[], $3::text[], $4::uuid[], $5::numeric[]) as x(u, o, a, n)`,
    [disputeId, ...columns],
  );
}

export async function insertDisputeEvent(
  tx: Queryable,
  e: { disputeId: string; status: string; at: Date; by: string; detail: Record<string, unknown> },
): Promise<void> {
  await tx.query("insert into dispute_events (dispute_id, status, at, by, detail) values ($1, $2, $3, $4, $5)", [
    e.disputeId,
    e.status,
    e.at.toISOString(),
    e.by,
    JSON.stringify(e.detail),
  ]);
}

/** A dispute by id (`forUpdate`: its row locked until the transaction ends). */
export async function getDisputeRow(db: Queryable, id: string, forUpdate = false): Promise<DisputeRow | undefined> {
  const [row] = await db.query<DisputeRow>(`select ${DISPUTE} from disputes d where d.id = $1${forUpdate ? " for update" : ""}`, [id]);
  return row;
}

/** The items of these disputes, with their records' external ids, gross and whether they were reversed (`operatorId`: only its own). */
export async function disputeItemRows(db: Queryable, disputeIds: string[], operatorId: string | null = null): Promise<DisputeItemRow[]> {
  if (disputeIds.length === 0) return [];
  return db.query<DisputeItemRow>(
    `select i.dispute_id, i.usage_id, u.external_id, i.operator_id, i.asset_id, s.code as asset, s.scale, i.net::text as net, u.gross::text as gross,
            exists (select 1 from transfers t where t.reverses_id = u.transfer_id) as reversed
       from dispute_items i join usage_records u on u.id = i.usage_id join assets s on s.id = i.asset_id
      where i.dispute_id = any($1::uuid[]) and ($2::text is null or i.operator_id = $2)
      order by i.dispute_id, u.external_id, i.usage_id`,
    [pgArray(disputeIds), operatorId],
  );
}

export interface DisputeFilter {
  marketplaceId?: string;
  /** Only disputes with a record of this operator. */
  operatorId?: string;
  status?: string;
  afterId?: string;
  limit: number;
}

/** Disputes by id (uuid v7: oldest first), after a cursor. */
export async function listDisputeRows(db: Queryable, f: DisputeFilter): Promise<DisputeRow[]> {
  return db.query<DisputeRow>(
    `select ${DISPUTE} from disputes d
      where ($1::text is null or d.marketplace_id = $1) and ($2::text is null or d.status = $2) and ($3::uuid is null or d.id > $3)
        and ($4::text is null or exists (select 1 from dispute_items i where i.dispute_id = d.id and i.operator_id = $4))
      order by d.id limit $5`,
    [f.marketplaceId ?? null, f.status ?? null, f.afterId ?? null, f.operatorId ?? null, f.limit],
  );
}

/** Records the decision of an open dispute and closes its items; undefined when it was not open. */
export async function decideDisputeRow(
  tx: Queryable,
  d: { id: string; status: "upheld" | "rejected"; by: string; at: Date; note: string | null },
): Promise<DisputeRow | undefined> {
  const [row] = await tx.query<DisputeRow>(
    `update disputes d set status = $2, decided_by = $3, decided_at = $4, decision_note = $5 where d.id = $1 and d.status = 'open' returning ${DISPUTE}`,
    [d.id, d.status, d.by, d.at.toISOString(), d.note],
  );
  if (row) await tx.query("update dispute_items set open = false where dispute_id = $1 and open", [d.id]);
  return row;
}

/** The open dispute each of these records is in, if any. */
export async function openDisputesOf(db: Queryable, usageIds: string[]): Promise<Array<{ usage_id: string; dispute_id: string }>> {
  if (usageIds.length === 0) return [];
  return db.query<{ usage_id: string; dispute_id: string }>("select usage_id, dispute_id from dispute_items where open and usage_id = any($1::uuid[])", [
    pgArray(usageIds),
  ]);
}

/** A marketplace's dispute window in days, if an admin set one. */
export async function disputeWindowOf(db: Queryable, marketplaceId: string): Promise<{ days: number; updated_by: string; updated_at: Date } | undefined> {
  const [row] = await db.query<{ days: number; updated_by: string; updated_at: Date }>(
    "select dispute_window_days as days, updated_by, updated_at from marketplace_dispute_settings where marketplace_id = $1",
    [marketplaceId],
  );
  return row;
}

export async function upsertDisputeWindow(tx: Queryable, s: { marketplaceId: string; days: number; by: string; at: Date }): Promise<void> {
  await tx.query(
    `insert into marketplace_dispute_settings (marketplace_id, dispute_window_days, updated_by, updated_at) values ($1, $2, $3, $4)
     on conflict (marketplace_id) do update set dispute_window_days = excluded.dispute_window_days, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
    [s.marketplaceId, s.days, s.by, s.at.toISOString()],
  );
}
