import { sql } from "drizzle-orm";
import { check, integer, numeric, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { assets } from "./assets.js";

/**
 * How payouts of one asset are made: the smallest amount worth paying, whether the worker pays
 * operators automatically every `interval_seconds` or only on request, and the largest share of a
 * payout that its gas may cost. An asset without a row pays on request, from 1 unit, uncapped.
 */
export const payoutPolicies = pgTable(
  "payout_policies",
  {
    assetId: uuid("asset_id").primaryKey().references(() => assets.id),
    minAmount: numeric("min_amount", { precision: 78, scale: 0 }).notNull(),
    /** manual | interval */
    schedule: text("schedule").notNull(),
    intervalSeconds: integer("interval_seconds"),
    /** Gas may cost at most this many basis points of a payout; null: no cap. */
    maxGasShareBps: integer("max_gas_share_bps"),
    /** The largest payout of one operator in this asset; null: no cap. */
    maxPerPayout: numeric("max_per_payout", { precision: 78, scale: 0 }),
    /** The most one operator may be paid of this asset per UTC day (payouts asked for that day, failed ones aside); null: no cap. */
    maxPerDay: numeric("max_per_day", { precision: 78, scale: 0 }),
    updatedBy: text("updated_by").notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    check("payout_policies_schedule", sql`${t.schedule} in ('manual', 'interval') and (${t.schedule} = 'manual') = (${t.intervalSeconds} is null)`),
    check("payout_policies_min", sql`${t.minAmount} >= 1`),
  ],
);
