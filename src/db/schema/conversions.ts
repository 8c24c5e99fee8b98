import { sql } from "drizzle-orm";
import { check, index, integer, jsonb, numeric, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { assets } from "./assets.js";
import { operators } from "./marketplaces.js";

/**
 * Exchange rates with their source (append-only): one whole `base` is worth num/den whole `quote`,
 * as observed at `observed_at`. A feed rate is a round read from an on-chain price feed
 * (AggregatorV3Interface); a manual rate was entered by finance and approved by a second key.
 */
export const rates = pgTable(
  "rates",
  {
    id: uuid("id").primaryKey(),
    baseAssetId: uuid("base_asset_id")
      .notNull()
      .references(() => assets.id),
    quoteAssetId: uuid("quote_asset_id")
      .notNull()
      .references(() => assets.id),
    num: numeric("num", { precision: 78, scale: 0 }).notNull(),
    den: numeric("den", { precision: 78, scale: 0 }).notNull(),
    observedAt: timestamp("observed_at", { withTimezone: true }).notNull(),
    /** feed | manual */
    source: text("source").notNull(),
    /** feed: "{chain_id}:{feed address}:{round id}"; manual: the approved proposal's id. */
    sourceRef: text("source_ref").notNull(),
    recordedAt: timestamp("recorded_at", { withTimezone: true }).notNull(),
  },
  (t) => [
    check("rates_positive", sql`${t.num} > 0 and ${t.den} > 0`),
    check("rates_source", sql`${t.source} in ('feed', 'manual')`),
    check("rates_pair", sql`${t.baseAssetId} <> ${t.quoteAssetId}`),
    uniqueIndex("rates_source_ref_uq").on(t.source, t.sourceRef),
    index("rates_pair_idx").on(t.baseAssetId, t.quoteAssetId, t.observedAt),
  ],
);

/**
 * The assets an operator is paid its earnings of one asset in, split by basis points, set by the
 * operator's own key (append-only: the latest version applies to payouts requested after it).
 */
export const payoutPreferences = pgTable(
  "payout_preferences",
  {
    operatorId: text("operator_id")
      .notNull()
      .references(() => operators.id),
    /** The asset the earnings are in (a marketplace's pricing currency). */
    assetId: uuid("asset_id")
      .notNull()
      .references(() => assets.id),
    version: integer("version").notNull(),
    /** [{ asset_id, asset, bps }]: bps sum to 10,000. */
    splits: jsonb("splits").notNull(),
    setBy: text("set_by").notNull(),
    setAt: timestamp("set_at", { withTimezone: true }).notNull(),
    requestId: text("request_id"),
  },
  (t) => [uniqueIndex("payout_preferences_version_uq").on(t.operatorId, t.assetId, t.version), check("payout_preferences_version", sql`${t.version} >= 1`)],
);

/**
 * One conversion (append-only), booked by `transfer_id` through the platform's conversion accounts:
 * `used` of the source asset bought `to_amount` of the other at the rate num/den (whole target per
 * whole source); the rest of the part (`remainder`) stayed where it was. Of a payout: an operator's
 * earnings converted into an asset it is paid in. Of a deposit: a customer's money received in
 * another asset than its marketplace's pricing currency, converted into it.
 */
export const conversions = pgTable(
  "conversions",
  {
    id: uuid("id").primaryKey(),
    transferId: uuid("transfer_id").notNull(),
    /** payout | deposit */
    kind: text("kind").notNull(),
    /** The payout whose amount was converted (settlement "convert"), and the payout that pays the result. */
    payoutId: uuid("payout_id"),
    childPayoutId: uuid("child_payout_id"),
    operatorId: text("operator_id"),
    /** Of a deposit: whose money it was. */
    marketplaceId: text("marketplace_id"),
    customerId: text("customer_id"),
    fromAssetId: uuid("from_asset_id")
      .notNull()
      .references(() => assets.id),
    toAssetId: uuid("to_asset_id")
      .notNull()
      .references(() => assets.id),
    bps: integer("bps").notNull(),
    part: numeric("part", { precision: 78, scale: 0 }).notNull(),
    used: numeric("used", { precision: 78, scale: 0 }).notNull(),
    remainder: numeric("remainder", { precision: 78, scale: 0 }).notNull(),
    toAmount: numeric("to_amount", { precision: 78, scale: 0 }).notNull(),
    /** The rate applied, oriented from → to; the rate row it came from (null when both are one asset). */
    rateNum: numeric("rate_num", { precision: 78, scale: 0 }).notNull(),
    rateDen: numeric("rate_den", { precision: 78, scale: 0 }).notNull(),
    rateId: uuid("rate_id").references(() => rates.id),
    /** The rate lock this slice of a payout's part consumed (its rate is the lock's), or null: the rate of the moment. */
    rateLockId: uuid("rate_lock_id"),
    /** What marking the platform's position in the target asset to this rate booked as gain (−) or loss (+), in the earnings asset. */
    revaluation: numeric("revaluation", { precision: 78, scale: 0 }).notNull().default("0"),
    convertedAt: timestamp("converted_at", { withTimezone: true }).notNull(),
  },
  (t) => [
    check("conversions_amounts", sql`${t.used} >= 0 and ${t.remainder} >= 0 and ${t.toAmount} >= 0 and ${t.used} + ${t.remainder} = ${t.part}`),
    check(
      "conversions_kind",
      sql`(${t.kind} = 'payout' and ${t.payoutId} is not null and ${t.operatorId} is not null and ${t.customerId} is null)
       or (${t.kind} = 'deposit' and ${t.marketplaceId} is not null and ${t.customerId} is not null and ${t.payoutId} is null)`,
    ),
    // One conversion per pair and transfer: a row recorded twice would count money received twice.
    uniqueIndex("conversions_transfer_pair_uq").on(t.transferId, t.fromAssetId, t.toAssetId),
    index("conversions_payout_idx").on(t.payoutId),
    index("conversions_rate_lock_idx")
      .on(t.rateLockId)
      .where(sql`${t.rateLockId} is not null`),
    index("conversions_operator_idx").on(t.operatorId, t.convertedAt),
    index("conversions_customer_idx").on(t.marketplaceId, t.toAssetId, t.customerId),
  ],
);
