import type { Queryable } from "../db/client.js";
import { getAssetByCode } from "../db/queries/assets.js";
import { LedgerError } from "../domain/errors.js";

export interface PayoutPolicy {
  assetId: string;
  assetCode: string;
  minAmount: bigint;
  schedule: "manual" | "interval";
  intervalSeconds: number | null;
  maxGasShareBps: number | null;
  updatedBy: string | null;
  updatedAt: Date | null;
}

type Row = { asset_id: string; code: string; min_amount: string; schedule: "manual" | "interval"; interval_seconds: number | null; max_gas_share_bps: number | null; updated_by: string | null; updated_at: Date | string | null };

const toPolicy = (r: Row): PayoutPolicy => ({
  assetId: r.asset_id, assetCode: r.code, minAmount: BigInt(r.min_amount), schedule: r.schedule, intervalSeconds: r.interval_seconds,
  maxGasShareBps: r.max_gas_share_bps, updatedBy: r.updated_by, updatedAt: r.updated_at === null ? null : new Date(r.updated_at),
});

/** The default of an asset without a policy: pay on request, from one unit, no gas cap. */
const SELECT = `select s.id as asset_id, s.code, coalesce(p.min_amount, 1)::text as min_amount, coalesce(p.schedule, 'manual') as schedule,
  p.interval_seconds, p.max_gas_share_bps, p.updated_by, p.updated_at
  from assets s left join payout_policies p on p.asset_id = s.id`;

export async function getPayoutPolicy(db: Queryable, assetId: string): Promise<PayoutPolicy> {
  const rows = await db.query<Row>(`${SELECT} where s.id = $1`, [assetId]);
  return toPolicy(rows[0]!);
}

export async function listPayoutPolicies(db: Queryable): Promise<PayoutPolicy[]> {
  return (await db.query<Row>(`${SELECT} order by s.code`)).map(toPolicy);
}

/** Assets the worker pays automatically. */
export async function scheduledPolicies(db: Queryable): Promise<PayoutPolicy[]> {
  return (await db.query<Row>(`${SELECT} where p.schedule = 'interval' order by s.code`)).map(toPolicy);
}

export async function setPayoutPolicy(
  db: Queryable,
  input: { asset: string; minAmount: bigint; schedule: "manual" | "interval"; intervalSeconds?: number; maxGasShareBps?: number | null; updatedBy: string },
): Promise<PayoutPolicy> {
  const asset = await getAssetByCode(db, input.asset);
  if (!asset) throw new LedgerError("asset_not_found", `asset ${input.asset} does not exist`);
  if ((input.schedule === "interval") !== (input.intervalSeconds !== undefined)) {
    throw new LedgerError("invalid_request", "interval_seconds is required with schedule 'interval' and not allowed with 'manual'", [
      { path: "intervalSeconds", message: input.schedule === "interval" ? "is required" : "is only for schedule 'interval'" },
    ]);
  }
  await db.query(
    `insert into payout_policies (asset_id, min_amount, schedule, interval_seconds, max_gas_share_bps, updated_by, updated_at)
     values ($1, $2, $3, $4, $5, $6, now())
     on conflict (asset_id) do update set min_amount = excluded.min_amount, schedule = excluded.schedule, interval_seconds = excluded.interval_seconds,
       max_gas_share_bps = excluded.max_gas_share_bps, updated_by = excluded.updated_by, updated_at = now()`,
    [asset.id, input.minAmount.toString(), input.schedule, input.intervalSeconds ?? null, input.maxGasShareBps ?? null, input.updatedBy]);
  return getPayoutPolicy(db, asset.id);
}
