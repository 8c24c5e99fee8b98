import { and, asc, type Column, eq, sql } from "drizzle-orm";
import type { Queryable } from "../client.js";
import { orm, run } from "../orm.js";
import { assets, operatorPayoutLimits, payoutPolicies } from "../schema/index.js";

/** An asset's payout policy as stored, with the defaults filled in for an asset without one. */
export type PayoutPolicyRow = {
  asset_id: string;
  code: string;
  min_amount: string;
  schedule: "manual" | "interval";
  interval_seconds: number | null;
  max_gas_share_bps: number | null;
  max_per_payout: string | null;
  max_per_day: string | null;
  approval_threshold: string | null;
  updated_by: string | null;
  updated_at: Date | string | null;
};

/** An amount column as text (numeric(78, 0): exact, whatever the driver makes of numbers). */
const asText = (c: Column) => sql<string | null>`${c}::text`;

/** Every asset with its policy; the default of an asset without a policy: pay on request, from one unit, no gas cap. */
function selectPolicies(db: Queryable) {
  const p = payoutPolicies;
  return orm(db)
    .select({
      asset_id: assets.id,
      code: assets.code,
      min_amount: sql<string>`coalesce(${p.minAmount}, 1)::text`,
      schedule: sql<"manual" | "interval">`coalesce(${p.schedule}, 'manual')`,
      interval_seconds: p.intervalSeconds,
      max_gas_share_bps: p.maxGasShareBps,
      max_per_payout: asText(p.maxPerPayout),
      max_per_day: asText(p.maxPerDay),
      approval_threshold: asText(p.approvalThreshold),
      updated_by: p.updatedBy,
      updated_at: p.updatedAt,
    })
    .from(assets)
    .leftJoin(p, eq(p.assetId, assets.id));
}

/** The policy of an asset (its defaults when it has none); undefined when the asset does not exist. */
export async function getPayoutPolicyRow(db: Queryable, assetId: string): Promise<PayoutPolicyRow | undefined> {
  const rows = await run(selectPolicies(db).where(eq(assets.id, assetId)));
  return rows[0];
}

/** The policies of every asset, by asset code. */
export async function listPayoutPolicyRows(db: Queryable): Promise<PayoutPolicyRow[]> {
  return run(selectPolicies(db).orderBy(asc(assets.code)));
}

/** The policies of the assets paid on a schedule ('interval'), by asset code. */
export async function listScheduledPayoutPolicyRows(db: Queryable): Promise<PayoutPolicyRow[]> {
  return run(selectPolicies(db).where(eq(payoutPolicies.schedule, "interval")).orderBy(asc(assets.code)));
}

/** Sets (inserts or replaces) an asset's payout policy. */
export async function upsertPayoutPolicy(
  db: Queryable,
  p: {
    assetId: string;
    minAmount: bigint;
    schedule: "manual" | "interval";
    intervalSeconds: number | null;
    maxGasShareBps: number | null;
    maxPerPayout: bigint | null;
    maxPerDay: bigint | null;
    approvalThreshold: bigint | null;
    updatedBy: string;
    updatedAt: Date;
  },
): Promise<void> {
  const excluded = (c: Column) => sql`excluded.${sql.identifier(c.name)}`;
  const t = payoutPolicies;
  await run(
    orm(db)
      .insert(t)
      .values({
        assetId: p.assetId,
        minAmount: p.minAmount.toString(),
        schedule: p.schedule,
        intervalSeconds: p.intervalSeconds,
        maxGasShareBps: p.maxGasShareBps,
        maxPerPayout: p.maxPerPayout?.toString() ?? null,
        maxPerDay: p.maxPerDay?.toString() ?? null,
        approvalThreshold: p.approvalThreshold?.toString() ?? null,
        updatedBy: p.updatedBy,
        updatedAt: p.updatedAt,
      })
      .onConflictDoUpdate({
        target: t.assetId,
        set: {
          minAmount: excluded(t.minAmount),
          schedule: excluded(t.schedule),
          intervalSeconds: excluded(t.intervalSeconds),
          maxGasShareBps: excluded(t.maxGasShareBps),
          maxPerPayout: excluded(t.maxPerPayout),
          maxPerDay: excluded(t.maxPerDay),
          approvalThreshold: excluded(t.approvalThreshold),
          updatedBy: excluded(t.updatedBy),
          updatedAt: excluded(t.updatedAt),
        },
      }),
  );
}

export type OperatorPayoutLimitRow = {
  code: string;
  max_per_payout: string | null;
  max_per_day: string | null;
  proposal_id: string | null;
  updated_at: Date | string | null;
};

/** An operator's own payout caps in an asset (nulls when it has none); undefined when the asset does not exist. */
export async function getOperatorPayoutLimitRow(db: Queryable, operatorId: string, assetId: string): Promise<OperatorPayoutLimitRow | undefined> {
  const l = operatorPayoutLimits;
  const rows = await run(
    orm(db)
      .select({
        code: assets.code,
        max_per_payout: asText(l.maxPerPayout),
        max_per_day: asText(l.maxPerDay),
        proposal_id: l.proposalId,
        updated_at: l.updatedAt,
      })
      .from(assets)
      .leftJoin(l, and(eq(l.assetId, assets.id), eq(l.operatorId, operatorId)))
      .where(eq(assets.id, assetId)),
  );
  return rows[0];
}

/**
 * The lock of an asset's payout limits (its policy, and every operator's own limits in it), until
 * the transaction ends: a payout request takes it shared while it judges and writes its hold, a
 * change of the limits exclusively, so that no request written after a change was judged under
 * the limits before it.
 */
export async function lockPayoutLimits(tx: Queryable, assetId: string, mode: "shared" | "exclusive"): Promise<void> {
  await tx.query(`select ${mode === "shared" ? "pg_advisory_xact_lock_shared" : "pg_advisory_xact_lock"}(hashtextextended($1, 0))`, [
    `payout-limits:${assetId}`,
  ]);
}
