import type { Queryable } from "../client.js";

/** An asset's payout policy as stored, with the defaults filled in for an asset without one. */
export type PayoutPolicyRow = {
  asset_id: string; code: string; min_amount: string; schedule: "manual" | "interval"; interval_seconds: number | null; max_gas_share_bps: number | null;
  max_per_payout: string | null; max_per_day: string | null; approval_threshold: string | null; updated_by: string | null; updated_at: Date | string | null;
};

/** The default of an asset without a policy: pay on request, from one unit, no gas cap. */
const SELECT = `select s.id as asset_id, s.code, coalesce(p.min_amount, 1)::text as min_amount, coalesce(p.schedule, 'manual') as schedule,
  p.interval_seconds, p.max_gas_share_bps, p.max_per_payout::text as max_per_payout, p.max_per_day::text as max_per_day, p.approval_threshold::text as approval_threshold, p.updated_by, p.updated_at
  from assets s left join payout_policies p on p.asset_id = s.id`;

/** The policy of an asset (its defaults when it has none); undefined when the asset does not exist. */
export async function getPayoutPolicyRow(db: Queryable, assetId: string): Promise<PayoutPolicyRow | undefined> {
  const rows = await db.query<PayoutPolicyRow>(`${SELECT} where s.id = $1`, [assetId]);
  return rows[0];
}

/** The policies of every asset, by asset code. */
export async function listPayoutPolicyRows(db: Queryable): Promise<PayoutPolicyRow[]> {
  return db.query<PayoutPolicyRow>(`${SELECT} order by s.code`);
}

/** The policies of the assets paid on a schedule ('interval'), by asset code. */
export async function listScheduledPayoutPolicyRows(db: Queryable): Promise<PayoutPolicyRow[]> {
  return db.query<PayoutPolicyRow>(`${SELECT} where p.schedule = 'interval' order by s.code`);
}

/** Sets (inserts or replaces) an asset's payout policy. */
export async function upsertPayoutPolicy(
  db: Queryable,
  p: {
    assetId: string; minAmount: bigint; schedule: "manual" | "interval"; intervalSeconds: number | null; maxGasShareBps: number | null;
    maxPerPayout: bigint | null; maxPerDay: bigint | null; approvalThreshold: bigint | null; updatedBy: string; updatedAt: Date;
  },
): Promise<void> {
  await db.query(
    `insert into payout_policies (asset_id, min_amount, schedule, interval_seconds, max_gas_share_bps, max_per_payout, max_per_day, approval_threshold, updated_by, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     on conflict (asset_id) do update set min_amount = excluded.min_amount, schedule = excluded.schedule, interval_seconds = excluded.interval_seconds,
       max_gas_share_bps = excluded.max_gas_share_bps, max_per_payout = excluded.max_per_payout, max_per_day = excluded.max_per_day,
       approval_threshold = excluded.approval_threshold, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
    [p.assetId, p.minAmount.toString(), p.schedule, p.intervalSeconds, p.maxGasShareBps,
      p.maxPerPayout?.toString() ?? null, p.maxPerDay?.toString() ?? null, p.approvalThreshold?.toString() ?? null, p.updatedBy, p.updatedAt.toISOString()]);
}

export type OperatorPayoutLimitRow = { code: string; max_per_payout: string | null; max_per_day: string | null; proposal_id: string | null; updated_at: Date | string | null };

/** An operator's own payout caps in an asset (nulls when it has none); undefined when the asset does not exist. */
export async function getOperatorPayoutLimitRow(db: Queryable, operatorId: string, assetId: string): Promise<OperatorPayoutLimitRow | undefined> {
  const rows = await db.query<OperatorPayoutLimitRow>(
    `select s.code, l.max_per_payout::text as max_per_payout, l.max_per_day::text as max_per_day, l.proposal_id, l.updated_at
       from assets s left join operator_payout_limits l on l.asset_id = s.id and l.operator_id = $1 where s.id = $2`, [operatorId, assetId]);
  return rows[0];
}
