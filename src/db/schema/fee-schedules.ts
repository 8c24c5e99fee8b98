import { integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { marketplaces } from "./marketplaces.js";

/**
 * A version of a marketplace's fee schedule. Versions are never changed: a new version with a later
 * effective_from replaces it from that instant. Rating uses the version in force at a record's
 * effective time. rules: ConfiguredRule[] (src/domain/rating.ts).
 */
export const feeSchedules = pgTable(
  "fee_schedules",
  {
    marketplaceId: text("marketplace_id")
      .notNull()
      .references(() => marketplaces.id),
    version: integer("version").notNull(),
    effectiveFrom: timestamp("effective_from", { withTimezone: true }).notNull(),
    rules: jsonb("rules").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.marketplaceId, t.version] }), uniqueIndex("fee_schedules_effective_uq").on(t.marketplaceId, t.effectiveFrom)],
);
