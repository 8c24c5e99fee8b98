import { sql } from "drizzle-orm";
import { check, jsonb, numeric, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { assets } from "./assets.js";
import { marketplaces } from "./marketplaces.js";

/**
 * What one usage record of a marketplace may claim in an asset, set by an admin (src/domain/usage-limits.ts).
 * A marketplace and asset without a row have the defaults: one million whole units of gross per record,
 * and for time units at most 100,000 of the resource in use at once.
 */
export const usageLimits = pgTable(
  "usage_limits",
  {
    marketplaceId: text("marketplace_id")
      .notNull()
      .references(() => marketplaces.id),
    assetId: uuid("asset_id")
      .notNull()
      .references(() => assets.id),
    /** In the asset's smallest unit; null: the default. */
    maxGrossPerRecord: numeric("max_gross_per_record", { precision: 78, scale: 0 }),
    /** unit → the largest quantity per second of a record's period, as a decimal string; units absent keep their default. */
    maxQuantityPerSecond: jsonb("max_quantity_per_second").notNull().default({}),
    updatedBy: text("updated_by").notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.marketplaceId, t.assetId] }),
    check("usage_limits_gross", sql`${t.maxGrossPerRecord} is null or ${t.maxGrossPerRecord} >= 1`),
  ],
);
