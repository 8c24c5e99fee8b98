import { sql } from "drizzle-orm";
import { check, integer, numeric, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { assets } from "./assets.js";

/**
 * How payouts of one asset are made: the smallest amount worth paying, whether the worker pays
 * operators automatically every `interval_seconds` or only on request, and the largest share of a
 * payout that its gas may cost. An asset without a row pays on request, from 1 unit, uncapped.
 */
export const payoutPolicies = pgTable(
  "payout_policies",
  {
    assetId: uuid("asset_id")
      .primaryKey()
      .references(() => assets.id),
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
    /** A payout above this needs a second key's approval before it is paid; null: none does. */
    approvalThreshold: numeric("approval_threshold", { precision: 78, scale: 0 }),
    updatedBy: text("updated_by").notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    check("payout_policies_schedule", sql`${t.schedule} in ('manual', 'interval') and (${t.schedule} = 'manual') = (${t.intervalSeconds} is null)`),
    check("payout_policies_min", sql`${t.minAmount} >= 1`),
  ],
);

/**
 * Payout caps of one operator in one asset, on top of the asset's policy (the lower cap applies).
 * Set through an approved proposal (kind operator_payout_limits).
 */
export const operatorPayoutLimits = pgTable(
  "operator_payout_limits",
  {
    operatorId: text("operator_id").notNull(),
    assetId: uuid("asset_id")
      .notNull()
      .references(() => assets.id),
    /** The largest payout of this operator in this asset; null: the policy's cap alone. */
    maxPerPayout: numeric("max_per_payout", { precision: 78, scale: 0 }),
    /** The most this operator may be paid of this asset per UTC day; null: the policy's cap alone. */
    maxPerDay: numeric("max_per_day", { precision: 78, scale: 0 }),
    proposalId: uuid("proposal_id").notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.operatorId, t.assetId] }),
    check("operator_payout_limits_caps", sql`(${t.maxPerPayout} is null or ${t.maxPerPayout} >= 1) and (${t.maxPerDay} is null or ${t.maxPerDay} >= 1)`),
  ],
);
