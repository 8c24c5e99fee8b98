import { sql } from "drizzle-orm";
import { check, index, numeric, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { assets } from "./assets.js";
import { rates } from "./conversions.js";

/**
 * Usage of a marketplace whose rate policy is `at_earning`, waiting for the worker to lock the rate
 * of its operator's earnings (docs/settlement.md, "Rate policy"). Written in the same statement as
 * the usage record; deleted by the worker in the transaction that records the locks.
 */
export const rateLockQueue = pgTable(
  "rate_lock_queue",
  {
    usageId: uuid("usage_id").notNull(),
    marketplaceId: text("marketplace_id").notNull(),
    operatorId: text("operator_id").notNull(),
    assetId: uuid("asset_id").notNull(),
    /** The operator's earnings of the record (its net), in the pricing currency. */
    net: numeric("net", { precision: 78, scale: 0 }).notNull(),
    queuedAt: timestamp("queued_at", { withTimezone: true }).notNull(),
  },
  // Keyed within its marketplace, as the record is (docs/scaling.md, "Beyond one primary").
  (t) => [primaryKey({ columns: [t.marketplaceId, t.usageId] }), index("rate_lock_queue_group_idx").on(t.marketplaceId, t.operatorId, t.assetId)],
);

/**
 * A rate locked for an amount of an operator's earnings (in the pricing currency `from`) that it is
 * paid in `to`: convert payouts consume an operator's locks of a pair oldest first, each slice at the
 * lock's rate. Only `consumed` changes, upwards, as conversions use it (each such conversion names
 * the lock; `verify` checks it equals what they used), and `released`, upwards, as reversals of its
 * records give their share back (migration 0043).
 */
export const rateLocks = pgTable(
  "rate_locks",
  {
    id: uuid("id").primaryKey(),
    marketplaceId: text("marketplace_id").notNull(),
    operatorId: text("operator_id").notNull(),
    fromAssetId: uuid("from_asset_id")
      .notNull()
      .references(() => assets.id),
    toAssetId: uuid("to_asset_id")
      .notNull()
      .references(() => assets.id),
    /** The earnings locked, in `from`. */
    amount: numeric("amount", { precision: 78, scale: 0 }).notNull(),
    consumed: numeric("consumed", { precision: 78, scale: 0 }).notNull().default("0"),
    /** Given back by reversals of its records (migration 0043): never usable again. */
    released: numeric("released", { precision: 78, scale: 0 }).notNull().default("0"),
    /** The pass that took its records from the queue (rate_lock_records) and their total net; null on locks made before 0043. */
    passId: uuid("pass_id"),
    passTotal: numeric("pass_total", { precision: 78, scale: 0 }),
    /** The rate, oriented from → to, and the stored rate it is. */
    rateNum: numeric("rate_num", { precision: 78, scale: 0 }).notNull(),
    rateDen: numeric("rate_den", { precision: 78, scale: 0 }).notNull(),
    rateId: uuid("rate_id")
      .notNull()
      .references(() => rates.id),
    /** How many usage records it covers, and when they were first queued. */
    records: numeric("records").notNull(),
    earnedFrom: timestamp("earned_from", { withTimezone: true }).notNull(),
    lockedAt: timestamp("locked_at", { withTimezone: true }).notNull(),
  },
  (t) => [
    check("rate_locks_amounts", sql`${t.amount} > 0 and ${t.consumed} >= 0 and ${t.consumed} <= ${t.amount}`),
    check("rate_locks_rate", sql`${t.rateNum} > 0 and ${t.rateDen} > 0 and ${t.fromAssetId} <> ${t.toAssetId}`),
    index("rate_locks_open_idx")
      .on(t.operatorId, t.fromAssetId, t.toAssetId, t.lockedAt, t.id)
      .where(sql`${t.consumed} < ${t.amount}`),
    index("rate_locks_operator_idx").on(t.operatorId, t.lockedAt),
  ],
);
