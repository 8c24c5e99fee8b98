import { sql } from "drizzle-orm";
import { check, jsonb, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { assets } from "./assets.js";

/** A marketplace that sells operators' compute and posts their usage. Its id is chosen by the admin. */
export const marketplaces = pgTable(
  "marketplaces",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    metadata: jsonb("metadata").notNull().default({}),
    /** The currency its usage is rated in (docs/settlement.md); null: any asset it has a fee schedule in. */
    pricingAssetId: uuid("pricing_asset_id").references(() => assets.id),
    /** When the pricing currency was last set: customers' money received in other assets from then on is converted into it. */
    pricingSetAt: timestamp("pricing_set_at", { withTimezone: true }),
    /** When the rate of a conversion is fixed (docs/settlement.md, "Rate policy"): at_payout (the default) or at_earning. */
    ratePolicy: text("rate_policy").notNull().default("at_payout"),
    /** The IANA time zone its accounting periods (months) are in (docs/reconciliation.md, "Month-end close"). */
    timeZone: text("time_zone").notNull().default("UTC"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [check("marketplaces_rate_policy", sql`${t.ratePolicy} in ('at_payout', 'at_earning')`)],
);

/**
 * An operator (a seller of compute). Global: one operator may sell through several marketplaces and
 * has one payable account per asset across all of them.
 */
export const operators = pgTable("operators", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  metadata: jsonb("metadata").notNull().default({}),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

/** Which marketplaces an operator sells through: a marketplace may only post usage of its operators. */
export const marketplaceOperators = pgTable(
  "marketplace_operators",
  {
    marketplaceId: text("marketplace_id")
      .notNull()
      .references(() => marketplaces.id),
    operatorId: text("operator_id")
      .notNull()
      .references(() => operators.id),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.marketplaceId, t.operatorId] })],
);

/**
 * A marketplace's request to post usage for an operator that exists already (registered by another
 * marketplace or an admin): the link is made only when the operator's own key (or an admin)
 * accepts it. One row per marketplace and operator.
 */
export const operatorInvitations = pgTable(
  "operator_invitations",
  {
    marketplaceId: text("marketplace_id")
      .notNull()
      .references(() => marketplaces.id),
    operatorId: text("operator_id")
      .notNull()
      .references(() => operators.id),
    invitedBy: text("invited_by").notNull(),
    invitedAt: timestamp("invited_at", { withTimezone: true }).notNull(),
    acceptedBy: text("accepted_by"),
    acceptedAt: timestamp("accepted_at", { withTimezone: true }),
  },
  (t) => [primaryKey({ columns: [t.marketplaceId, t.operatorId] })],
);
