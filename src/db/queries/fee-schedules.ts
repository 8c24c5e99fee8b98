import { and, asc, eq, gte, max, sql } from "drizzle-orm";
import type { ConfiguredRule } from "../../domain/rating.js";
import type { Queryable } from "../client.js";
import { pgArray } from "../sql-arrays.js";
import { orm, run } from "../orm.js";
import { feeSchedules, marketplaces, usageRecords } from "../schema/index.js";

export type FeeScheduleRow = { marketplace_id: string; version: number; effective_from: Date | string; rules: ConfiguredRule[]; created_at: Date | string };

/** Locks the marketplace's row, so that publishers of its fee schedule take turns. */
export async function lockMarketplaceForFeeSchedule(tx: Queryable, marketplaceId: string): Promise<void> {
  await run(
    orm(tx)
      .select({ one: sql`1` })
      .from(marketplaces)
      .where(eq(marketplaces.id, marketplaceId))
      .for("update"),
  );
}

/** The latest effective time of the marketplace's usage rated at or after `from` (null: none). */
export async function latestRatedUsageSince(tx: Queryable, marketplaceId: string, from: Date): Promise<Date | string | null> {
  const [rated] = await run(
    orm(tx)
      .select({ latest: max(usageRecords.effectiveAt) })
      .from(usageRecords)
      .where(and(eq(usageRecords.marketplaceId, marketplaceId), gte(usageRecords.effectiveAt, from))),
  );
  return rated?.latest ?? null;
}

/**
 * Inserts the marketplace's next version (one more than its latest); undefined when a version
 * taking effect at the same time exists already.
 */
export async function insertNextFeeScheduleVersion(
  tx: Queryable,
  marketplaceId: string,
  effectiveFrom: Date,
  rules: unknown,
): Promise<FeeScheduleRow | undefined> {
  // The rules travel as text (`::text::jsonb`): postgres.js would JSON-encode a string given for a jsonb parameter a second time.
  const rows = await tx.query<FeeScheduleRow>(
    `insert into fee_schedules (marketplace_id, version, effective_from, rules)
       values ($1, coalesce((select max(version) from fee_schedules where marketplace_id = $1), 0) + 1, $2, $3::text::jsonb)
       on conflict do nothing returning *`,
    [marketplaceId, effectiveFrom.toISOString(), JSON.stringify(rules)],
  );
  return rows[0];
}

/** Every version of the marketplace's fee schedule, oldest first. */
export async function listFeeScheduleRows(db: Queryable, marketplaceId: string): Promise<FeeScheduleRow[]> {
  const f = feeSchedules;
  return run(
    orm(db)
      .select({
        // rules as the driver parsed it (the column's own mapping would also parse a JSON string stored in it).
        marketplace_id: f.marketplaceId,
        version: f.version,
        effective_from: f.effectiveFrom,
        rules: sql<ConfiguredRule[]>`${f.rules}`,
        created_at: f.createdAt,
      })
      .from(f)
      .where(eq(f.marketplaceId, marketplaceId))
      .orderBy(asc(f.version)),
  );
}

/** Each of these marketplaces' newest fee schedule version (a marketplace without one is left out). */
export async function newestFeeScheduleVersions(tx: Queryable, marketplaceIds: string[]): Promise<Map<string, number>> {
  const rows = await tx.query<{ m: string; v: number }>(
    "select marketplace_id as m, max(version)::int as v from fee_schedules where marketplace_id = any($1::text[]) group by marketplace_id",
    [pgArray(marketplaceIds)],
  );
  return new Map(rows.map((r) => [r.m, Number(r.v)]));
}
