import { type LegRecord, statusOf, type Transfer } from "../../domain/posting.js";
import type { TransferKind } from "../../domain/transfers.js";
import type { Queryable } from "../client.js";
import { pgArray } from "../sql-arrays.js";

interface TransferRow {
  id: string;
  idempotency_key: string;
  request_hash: string;
  kind: TransferKind;
  pending_id: string | null;
  reverses_id: string | null;
  timeout_at: Date | string | null;
  effective_at: Date | string;
  created_at: Date | string;
  metadata: Record<string, unknown>;
  legs: { leg: number; side: "debit" | "credit"; account_id: string; asset_id: string; posted_amount: string; pending_amount: string }[];
  resolution: TransferKind | null;
  reversed: boolean;
}

const SELECT_TRANSFERS = `
  select t.id, t.idempotency_key, t.request_hash, t.kind, t.pending_id, t.reverses_id,
         t.timeout_at, t.effective_at, t.created_at, t.metadata,
         (select json_agg(json_build_object('leg', e.leg, 'side', e.side, 'account_id', e.account_id,
                   'asset_id', e.asset_id, 'posted_amount', e.posted_amount::text,
                   'pending_amount', e.pending_amount::text) order by e.leg, e.side desc)
            from entries e where e.transfer_id = t.id) as legs,
         (select r.kind from transfers r where r.pending_id = t.id) as resolution,
         exists (select 1 from transfers r where r.reverses_id = t.id) as reversed
    from transfers t`;

export async function loadTransfers(db: Queryable, ids: string[]): Promise<Map<string, Transfer>> {
  const out = new Map<string, Transfer>();
  if (ids.length === 0) return out;
  const rows = await db.query<TransferRow & Record<string, unknown>>(`${SELECT_TRANSFERS} where t.id = any($1::uuid[])`, [pgArray(ids)]);
  for (const row of rows) out.set(row.id, toTransfer(row));
  return out;
}

export async function getTransfer(db: Queryable, id: string): Promise<Transfer | undefined> {
  return (await loadTransfers(db, [id])).get(id);
}

const date = (v: Date | string) => (v instanceof Date ? v : new Date(v));

function toTransfer(row: TransferRow): Transfer {
  const legs: LegRecord[] = [];
  for (const e of row.legs ?? []) {
    const leg = (legs[e.leg] ??= {
      debitAccountId: "",
      creditAccountId: "",
      assetId: e.asset_id,
      postedAmount: BigInt(e.posted_amount),
      pendingAmount: BigInt(e.pending_amount),
    });
    if (e.side === "debit") leg.debitAccountId = e.account_id;
    else leg.creditAccountId = e.account_id;
  }
  return {
    id: row.id,
    idempotencyKey: row.idempotency_key,
    requestHash: row.request_hash,
    kind: row.kind,
    pendingId: row.pending_id,
    reversesId: row.reverses_id,
    timeoutAt: row.timeout_at === null ? null : date(row.timeout_at),
    effectiveAt: date(row.effective_at),
    createdAt: date(row.created_at),
    metadata: row.metadata,
    legs,
    status: statusOf(row.kind, row.resolution, row.reversed),
  };
}
