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
  maxPerPayout: bigint | null;
  maxPerDay: bigint | null;
  approvalThreshold: bigint | null;
  updatedBy: string | null;
  updatedAt: Date | null;
}

type Row = {
  asset_id: string; code: string; min_amount: string; schedule: "manual" | "interval"; interval_seconds: number | null; max_gas_share_bps: number | null;
  max_per_payout: string | null; max_per_day: string | null; approval_threshold: string | null; updated_by: string | null; updated_at: Date | string | null;
};

const toPolicy = (r: Row): PayoutPolicy => ({
  assetId: r.asset_id, assetCode: r.code, minAmount: BigInt(r.min_amount), schedule: r.schedule, intervalSeconds: r.interval_seconds,
  maxGasShareBps: r.max_gas_share_bps, maxPerPayout: r.max_per_payout === null ? null : BigInt(r.max_per_payout),
  maxPerDay: r.max_per_day === null ? null : BigInt(r.max_per_day),
  approvalThreshold: r.approval_threshold === null ? null : BigInt(r.approval_threshold), updatedBy: r.updated_by, updatedAt: r.updated_at === null ? null : new Date(r.updated_at),
});

/** The default of an asset without a policy: pay on request, from one unit, no gas cap. */
const SELECT = `select s.id as asset_id, s.code, coalesce(p.min_amount, 1)::text as min_amount, coalesce(p.schedule, 'manual') as schedule,
  p.interval_seconds, p.max_gas_share_bps, p.max_per_payout::text as max_per_payout, p.max_per_day::text as max_per_day, p.approval_threshold::text as approval_threshold, p.updated_by, p.updated_at
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

export interface PayoutPolicyInput {
  asset: string; minAmount: bigint; schedule: "manual" | "interval"; intervalSeconds?: number; maxGasShareBps?: number | null;
  maxPerPayout?: bigint | null; maxPerDay?: bigint | null; approvalThreshold?: bigint | null;
}

/** Checks a policy as it would be set; answers its asset. */
export async function checkPayoutPolicy(db: Queryable, input: PayoutPolicyInput): Promise<{ id: string; code: string }> {
  const asset = await getAssetByCode(db, input.asset);
  if (!asset) throw new LedgerError("asset_not_found", `asset ${input.asset} does not exist`);
  if ((input.schedule === "interval") !== (input.intervalSeconds !== undefined)) {
    throw new LedgerError("invalid_request", "interval_seconds is required with schedule 'interval' and not allowed with 'manual'", [
      { path: "intervalSeconds", message: input.schedule === "interval" ? "is required" : "is only for schedule 'interval'" },
    ]);
  }
  for (const [field, cap] of [["maxPerPayout", input.maxPerPayout], ["maxPerDay", input.maxPerDay]] as const) {
    if (cap != null && cap < input.minAmount) {
      throw new LedgerError("invalid_request", `${field === "maxPerPayout" ? "max_per_payout" : "max_per_day"} must be at least min_amount (${input.minAmount})`, [{ path: field, message: "is below min_amount" }]);
    }
  }
  return asset;
}

/** Sets an asset's policy (carried out when a payout_policy proposal is approved). */
export async function setPayoutPolicy(db: Queryable, input: PayoutPolicyInput & { updatedBy: string; now: Date }): Promise<PayoutPolicy> {
  const asset = await checkPayoutPolicy(db, input);
  await db.query(
    `insert into payout_policies (asset_id, min_amount, schedule, interval_seconds, max_gas_share_bps, max_per_payout, max_per_day, approval_threshold, updated_by, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     on conflict (asset_id) do update set min_amount = excluded.min_amount, schedule = excluded.schedule, interval_seconds = excluded.interval_seconds,
       max_gas_share_bps = excluded.max_gas_share_bps, max_per_payout = excluded.max_per_payout, max_per_day = excluded.max_per_day,
       approval_threshold = excluded.approval_threshold, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
    [asset.id, input.minAmount.toString(), input.schedule, input.intervalSeconds ?? null, input.maxGasShareBps ?? null,
      input.maxPerPayout?.toString() ?? null, input.maxPerDay?.toString() ?? null, input.approvalThreshold?.toString() ?? null, input.updatedBy, input.now.toISOString()]);
  return getPayoutPolicy(db, asset.id);
}

export interface OperatorPayoutLimits {
  operatorId: string;
  assetCode: string;
  maxPerPayout: bigint | null;
  maxPerDay: bigint | null;
  proposalId: string | null;
  updatedAt: Date | null;
}

/** An operator's own payout caps in an asset (null: the policy's alone). */
export async function getOperatorPayoutLimits(db: Queryable, operatorId: string, assetId: string): Promise<OperatorPayoutLimits> {
  const rows = await db.query<{ code: string; max_per_payout: string | null; max_per_day: string | null; proposal_id: string | null; updated_at: Date | string | null }>(
    `select s.code, l.max_per_payout::text as max_per_payout, l.max_per_day::text as max_per_day, l.proposal_id, l.updated_at
       from assets s left join operator_payout_limits l on l.asset_id = s.id and l.operator_id = $1 where s.id = $2`, [operatorId, assetId]);
  const r = rows[0]!;
  return {
    operatorId, assetCode: r.code, maxPerPayout: r.max_per_payout === null ? null : BigInt(r.max_per_payout), maxPerDay: r.max_per_day === null ? null : BigInt(r.max_per_day),
    proposalId: r.proposal_id, updatedAt: r.updated_at === null ? null : new Date(r.updated_at),
  };
}

/** The lower of two caps (null: none). */
export function lowerCap(a: bigint | null, b: bigint | null): bigint | null {
  if (a === null) return b;
  if (b === null) return a;
  return a < b ? a : b;
}
