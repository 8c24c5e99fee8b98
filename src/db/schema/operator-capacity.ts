import { sql } from "drizzle-orm";
import { check, index, integer, numeric, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { assets } from "./assets.js";
import { marketplaces, operators } from "./marketplaces.js";

/**
 * A version of what an operator can sell of one resource (machine class): `units` of it from
 * `effective_from`, until `until` (none: until a later version). Versions never change; a later
 * effective_from replaces the one before from that instant (docs/usage.md, "Capacity").
 */
export const operatorCapacity = pgTable(
  "operator_capacity",
  {
    operatorId: text("operator_id")
      .notNull()
      .references(() => operators.id),
    resource: text("resource").notNull(),
    version: integer("version").notNull(),
    units: integer("units").notNull(),
    effectiveFrom: timestamp("effective_from", { withTimezone: true }).notNull(),
    until: timestamp("until", { withTimezone: true }),
    declaredBy: text("declared_by").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.operatorId, t.resource, t.version] }),
    uniqueIndex("operator_capacity_effective_uq").on(t.operatorId, t.resource, t.effectiveFrom),
    check("operator_capacity_units", sql`${t.units} >= 0`),
    check("operator_capacity_until", sql`${t.until} is null or ${t.until} > ${t.effectiveFrom}`),
  ],
);

/**
 * What a marketplace does with its usage beyond an operator's declared capacity, per resource
 * (`*`: every resource without a row of its own): refuse it (the default) or accept and flag it.
 */
export const capacityPolicies = pgTable(
  "capacity_policies",
  {
    marketplaceId: text("marketplace_id")
      .notNull()
      .references(() => marketplaces.id),
    resource: text("resource").notNull(),
    policy: text("policy").notNull(),
    updatedBy: text("updated_by").notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.marketplaceId, t.resource] }), check("capacity_policies_policy", sql`${t.policy} in ('refuse', 'flag')`)],
);

/**
 * A usage record accepted beyond its operator's declared capacity under a marketplace's `flag`
 * policy, for review: the capacity of its period, what other usage already held of it and what
 * the record claimed, in unit-milliseconds. Written with the record, in its transaction.
 */
export const usageCapacityFlags = pgTable(
  "usage_capacity_flags",
  {
    usageId: uuid("usage_id").notNull(),
    marketplaceId: text("marketplace_id").notNull(),
    operatorId: text("operator_id").notNull(),
    resource: text("resource").notNull(),
    capacityUnitMs: numeric("capacity_unit_ms", { precision: 78, scale: 0 }).notNull(),
    usedUnitMs: numeric("used_unit_ms", { precision: 78, scale: 0 }).notNull(),
    claimedUnitMs: numeric("claimed_unit_ms", { precision: 78, scale: 0 }).notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull(),
  },
  // Keyed within its marketplace, as the record is (docs/scaling.md, "Beyond one primary").
  (t) => [primaryKey({ columns: [t.marketplaceId, t.usageId] }), index("usage_capacity_flags_marketplace_idx").on(t.marketplaceId, t.createdAt)],
);

/**
 * An operator's costs of one machine class, per unit (one GPU and its share of the server), in the
 * display units of one asset: the operator's private data (docs/usage.md, "Costs, margin and what-if"; last write wins).
 */
export const operatorCosts = pgTable(
  "operator_costs",
  {
    operatorId: text("operator_id")
      .notNull()
      .references(() => operators.id),
    resource: text("resource").notNull(),
    assetId: uuid("asset_id")
      .notNull()
      .references(() => assets.id),
    powerWatts: numeric("power_watts").notNull(),
    pricePerKwh: numeric("price_per_kwh").notNull(),
    bandwidthMonthly: numeric("bandwidth_monthly").notNull(),
    otherMonthly: numeric("other_monthly").notNull(),
    purchasePrice: numeric("purchase_price").notNull(),
    depreciationMonths: integer("depreciation_months").notNull(),
    updatedBy: text("updated_by").notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.operatorId, t.resource] }), check("operator_costs_depreciation", sql`${t.depreciationMonths} between 1 and 600`)],
);
