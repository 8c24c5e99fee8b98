import type { Queryable } from "../client.js";

/**
 * Makes sure the marketplace has a usage limits row for the asset (all defaults when new), so that
 * it can be locked while it is merged. The rows are read with getUsageLimitRow (./usage.ts).
 */
export async function ensureUsageLimitRow(tx: Queryable, marketplaceId: string, assetId: string, updatedBy: string, at: Date): Promise<void> {
  await tx.query(
    `insert into usage_limits (marketplace_id, asset_id, updated_by, updated_at) values ($1, $2, $3, $4) on conflict do nothing`,
    [marketplaceId, assetId, updatedBy, at.toISOString()]);
}

/** Replaces the marketplace's usage limits for the asset (the row must exist). */
export async function updateUsageLimits(
  tx: Queryable,
  l: { marketplaceId: string; assetId: string; maxGrossPerRecord: string | null; maxQuantityPerSecond: Record<string, string>; updatedBy: string; updatedAt: Date },
): Promise<void> {
  await tx.query(
    `update usage_limits set max_gross_per_record = $3, max_quantity_per_second = $4::text::jsonb, updated_by = $5, updated_at = $6
        where marketplace_id = $1 and asset_id = $2`,
    [l.marketplaceId, l.assetId, l.maxGrossPerRecord, JSON.stringify(l.maxQuantityPerSecond), l.updatedBy, l.updatedAt.toISOString()]);
}
