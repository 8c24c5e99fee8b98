import type { Queryable } from "../db/client.js";
import { getAssetByCode } from "../db/queries/assets.js";
import {
  getOperatorPayoutLimitRow,
  getPayoutPolicyRow,
  listPayoutPolicyRows,
  listScheduledPayoutPolicyRows,
  upsertPayoutPolicy,
  lockPayoutLimits,
  type PayoutPolicyRow,
} from "../db/queries/payout-policies.js";
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

const toPolicy = (r: PayoutPolicyRow): PayoutPolicy => ({
  assetId: r.asset_id,
  assetCode: r.code,
  minAmount: BigInt(r.min_amount),
  schedule: r.schedule,
  intervalSeconds: r.interval_seconds,
  maxGasShareBps: r.max_gas_share_bps,
  maxPerPayout: r.max_per_payout === null ? null : BigInt(r.max_per_payout),
  maxPerDay: r.max_per_day === null ? null : BigInt(r.max_per_day),
  approvalThreshold: r.approval_threshold === null ? null : BigInt(r.approval_threshold),
  updatedBy: r.updated_by,
  updatedAt: r.updated_at === null ? null : new Date(r.updated_at),
});

/** An asset's policy; an asset without one has the default: pay on request, from one unit, no gas cap. */
export async function getPayoutPolicy(db: Queryable, assetId: string): Promise<PayoutPolicy> {
  return toPolicy((await getPayoutPolicyRow(db, assetId))!);
}

export async function listPayoutPolicies(db: Queryable): Promise<PayoutPolicy[]> {
  return (await listPayoutPolicyRows(db)).map(toPolicy);
}

/** Assets the worker pays automatically. */
export async function scheduledPolicies(db: Queryable): Promise<PayoutPolicy[]> {
  return (await listScheduledPayoutPolicyRows(db)).map(toPolicy);
}

export interface PayoutPolicyInput {
  asset: string;
  minAmount: bigint;
  schedule: "manual" | "interval";
  intervalSeconds?: number;
  maxGasShareBps?: number | null;
  maxPerPayout?: bigint | null;
  maxPerDay?: bigint | null;
  approvalThreshold?: bigint | null;
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
  for (const [field, cap] of [
    ["maxPerPayout", input.maxPerPayout],
    ["maxPerDay", input.maxPerDay],
  ] as const) {
    if (cap != null && cap < input.minAmount) {
      throw new LedgerError(
        "invalid_request",
        `${field === "maxPerPayout" ? "max_per_payout" : "max_per_day"} must be at least min_amount (${input.minAmount})`,
        [{ path: field, message: "is below min_amount" }],
      );
    }
  }
  return asset;
}

/** Sets an asset's policy (carried out when a payout_policy proposal is approved). */
export async function setPayoutPolicy(db: Queryable, input: PayoutPolicyInput & { updatedBy: string; now: Date }): Promise<PayoutPolicy> {
  const asset = await checkPayoutPolicy(db, input);
  // Waits for the payout requests being judged under the policy before (lockPayoutLimits).
  await lockPayoutLimits(db, asset.id, "exclusive");
  await upsertPayoutPolicy(db, {
    assetId: asset.id,
    minAmount: input.minAmount,
    schedule: input.schedule,
    intervalSeconds: input.intervalSeconds ?? null,
    maxGasShareBps: input.maxGasShareBps ?? null,
    maxPerPayout: input.maxPerPayout ?? null,
    maxPerDay: input.maxPerDay ?? null,
    approvalThreshold: input.approvalThreshold ?? null,
    updatedBy: input.updatedBy,
    updatedAt: input.now,
  });
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
  const r = (await getOperatorPayoutLimitRow(db, operatorId, assetId))!;
  return {
    operatorId,
    assetCode: r.code,
    maxPerPayout: r.max_per_payout === null ? null : BigInt(r.max_per_payout),
    maxPerDay: r.max_per_day === null ? null : BigInt(r.max_per_day),
    proposalId: r.proposal_id,
    updatedAt: r.updated_at === null ? null : new Date(r.updated_at),
  };
}

/** The lower of two caps (null: none). */
export function lowerCap(a: bigint | null, b: bigint | null): bigint | null {
  if (a === null) return b;
  if (b === null) return a;
  return a < b ? a : b;
}
