import { and, eq, sql } from "drizzle-orm";
import type { Queryable } from "../client.js";
import { orm, run } from "../orm.js";
import { usageLimits } from "../schema/index.js";

/**
 * Makes sure the marketplace has a usage limits row for the asset (all defaults when new), so that
 * it can be locked while it is merged. The rows are read with getUsageLimitRow (./usage.ts).
 */
export async function ensureUsageLimitRow(tx: Queryable, marketplaceId: string, assetId: string, updatedBy: string, at: Date): Promise<void> {
  await run(orm(tx).insert(usageLimits).values({ marketplaceId, assetId, updatedBy, updatedAt: at }).onConflictDoNothing());
}

/** Replaces the marketplace's usage limits for the asset (the row must exist). */
export async function updateUsageLimits(
  tx: Queryable,
  l: {
    marketplaceId: string;
    assetId: string;
    maxGrossPerRecord: string | null;
    maxQuantityPerSecond: Record<string, string>;
    updatedBy: string;
    updatedAt: Date;
  },
): Promise<void> {
  await run(
    orm(tx)
      .update(usageLimits)
      .set({
        maxGrossPerRecord: l.maxGrossPerRecord,
        // As text: postgres.js would JSON-encode a second time the string drizzle makes of a jsonb value.
        maxQuantityPerSecond: sql`${JSON.stringify(l.maxQuantityPerSecond)}::text::jsonb`,
        updatedBy: l.updatedBy,
        updatedAt: l.updatedAt,
      })
      .where(and(eq(usageLimits.marketplaceId, l.marketplaceId), eq(usageLimits.assetId, l.assetId))),
  );
}
