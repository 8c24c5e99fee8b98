import type { ConfiguredRule } from "../../domain/rating.js";
import type { Queryable } from "../client.js";

export type FeeScheduleRow = { marketplace_id: string; version: number; effective_from: Date | string; rules: ConfiguredRule[]; created_at: Date | string };

/** Locks the marketplace's row, so that publishers of its fee schedule take turns. */
export async function lockMarketplaceForFeeSchedule(tx: Queryable, marketplaceId: string): Promise<void> {
  await tx.query("select 1 from marketplaces where id = $1 for update", [marketplaceId]);
}

/** The latest effective time of the marketplace's usage rated at or after `from` (null: none). */
export async function latestRatedUsageSince(tx: Queryable, marketplaceId: string, from: Date): Promise<Date | string | null> {
  const [rated] = await tx.query<{ latest: Date | string | null }>(
    "select max(effective_at) as latest from usage_records where marketplace_id = $1 and effective_at >= $2",
    [marketplaceId, from.toISOString()]);
  return rated?.latest ?? null;
}

/**
 * Inserts the marketplace's next version (one more than its latest); undefined when a version
 * taking effect at the same time exists already.
 */
export async function insertNextFeeScheduleVersion(tx: Queryable, marketplaceId: string, effectiveFrom: Date, rules: unknown): Promise<FeeScheduleRow | undefined> {
  const rows = await tx.query<FeeScheduleRow>(
    `insert into fee_schedules (marketplace_id, version, effective_from, rules)
       values ($1, coalesce((select max(version) from fee_schedules where marketplace_id = $1), 0) + 1, $2, $3::text::jsonb)
       on conflict do nothing returning *`,
    [marketplaceId, effectiveFrom.toISOString(), JSON.stringify(rules)]);
  return rows[0];
}

/** Every version of the marketplace's fee schedule, oldest first. */
export async function listFeeScheduleRows(db: Queryable, marketplaceId: string): Promise<FeeScheduleRow[]> {
  return db.query<FeeScheduleRow>("select * from fee_schedules where marketplace_id = $1 order by version", [marketplaceId]);
}
