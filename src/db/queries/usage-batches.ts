import type { Queryable } from "../client.js";
import { pgColumns } from "../sql-arrays.js";

export interface UsageBatchRejectionRow {
  record_index: number;
  external_id: string | null;
  code: string;
  reason: string;
  field: string | null;
}

export interface UsageBatchRow {
  id: string;
  marketplace_id: string;
  idempotency_key: string | null;
  received_at: Date | string;
  records: number;
  accepted: number;
  duplicate: number;
  rejected: number;
  totals: { asset: string; records: number; gross: string }[];
}

export type NewUsageBatch = Omit<UsageBatchRow, "received_at"> & {
  /** Whose Idempotency-Key `idempotency_key` is (src/domain/access.ts, tenantOf): an admin's key for m1 is not m1's. */
  tenant: string;
  receivedAt: Date;
  rejections: UsageBatchRejectionRow[];
};

/**
 * Writes a batch's log and its rejections: one statement (one multi-row insert of the rejections).
 * A log for the same marketplace, tenant and Idempotency-Key already there wins: nothing is written
 * and its id is returned.
 */
export async function insertUsageBatch(tx: Queryable, b: NewUsageBatch): Promise<string> {
  // No giving way: inside the batch's transaction, which holds its marketplaces' funding locks.
  const cols = await pgColumns(b.rejections, [(r) => r.record_index, (r) => r.external_id, (r) => r.code, (r) => r.reason, (r) => r.field], { giveWay: false });
  const rows = await tx.query<{ id: string }>(
    `with batch as (
       insert into usage_batches (id, marketplace_id, tenant, idempotency_key, received_at, records, accepted, duplicate, rejected, totals)
       values ($1, $2, $15, $3, $4, $5, $6, $7, $8, $9::text::jsonb)
       on conflict do nothing
       returning id),
     rejections as (
       insert into usage_batch_rejections (batch_id, record_index, external_id, code, reason, field)
       select batch.id, r.* from batch, unnest($10::int[], $11::text[], $12::text[], $13::text[], $14::text[]) as r)
     select id from batch
     union all
     select id from usage_batches where marketplace_id = $2 and tenant = $15 and idempotency_key = $3 and not exists (select 1 from batch)`,
    [
      b.id,
      b.marketplace_id,
      b.idempotency_key,
      b.receivedAt.toISOString(),
      b.records,
      b.accepted,
      b.duplicate,
      b.rejected,
      JSON.stringify(b.totals),
      ...cols,
      b.tenant,
    ],
  );
  return rows[0]?.id ?? b.id;
}

/** Batches newest first, after a (received_at, id) cursor; filtered by marketplace and by having rejections. */
export async function listUsageBatchRows(
  db: Queryable,
  f: { marketplaceId?: string; hasRejections?: boolean; before?: { at: Date; id: string }; limit: number },
): Promise<UsageBatchRow[]> {
  return db.query<UsageBatchRow>(
    `select id, marketplace_id, idempotency_key, received_at, records, accepted, duplicate, rejected, totals
       from usage_batches
      where ($1::text is null or marketplace_id = $1)
        and ($2::boolean is null or (rejected > 0) = $2)
        and ($3::timestamptz is null or (received_at, id) < ($3::timestamptz, $4::text))
      order by received_at desc, id desc
      limit $5`,
    [f.marketplaceId ?? null, f.hasRejections ?? null, f.before?.at.toISOString() ?? null, f.before?.id ?? null, f.limit],
  );
}

export async function getUsageBatchRow(db: Queryable, id: string): Promise<UsageBatchRow | undefined> {
  const rows = await db.query<UsageBatchRow>(
    "select id, marketplace_id, idempotency_key, received_at, records, accepted, duplicate, rejected, totals from usage_batches where id = $1",
    [id],
  );
  return rows[0];
}

/** A batch's rejections by their place in the batch, after `afterIndex`. */
export async function listUsageBatchRejections(db: Queryable, batchId: string, afterIndex: number, limit: number): Promise<UsageBatchRejectionRow[]> {
  return db.query<UsageBatchRejectionRow>(
    `select record_index, external_id, code, reason, field from usage_batch_rejections
      where batch_id = $1 and record_index > $2 order by record_index limit $3`,
    [batchId, afterIndex, limit],
  );
}
