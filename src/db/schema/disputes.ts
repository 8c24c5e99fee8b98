import { sql } from "drizzle-orm";
import { bigserial, boolean, check, index, integer, jsonb, numeric, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { assets } from "./assets.js";
import { marketplaces } from "./marketplaces.js";
import { usageRecords } from "./usage-records.js";

/**
 * A dispute of usage records by their marketplace (docs/reconciliation.md, "Disputes"): while it is
 * open, the operators' earnings of its records are held (not payable); finance or an admin upholds
 * it (the records are reversed) or rejects it (the earnings are released). Decided once.
 */
export const disputes = pgTable(
  "disputes",
  {
    id: uuid("id").primaryKey(),
    marketplaceId: text("marketplace_id")
      .notNull()
      .references(() => marketplaces.id),
    /** open | upheld | rejected */
    status: text("status").notNull(),
    reason: text("reason").notNull(),
    /** The API key that opened it. */
    openedBy: text("opened_by").notNull(),
    openedAt: timestamp("opened_at", { withTimezone: true }).notNull(),
    decidedBy: text("decided_by"),
    decidedAt: timestamp("decided_at", { withTimezone: true }),
    decisionNote: text("decision_note"),
  },
  (t) => [
    check("disputes_status", sql`${t.status} in ('open', 'upheld', 'rejected')`),
    check("disputes_decided", sql`(${t.status} = 'open') = (${t.decidedAt} is null) and (${t.decidedAt} is null) = (${t.decidedBy} is null)`),
    index("disputes_marketplace_idx").on(t.marketplaceId, t.id),
    index("disputes_open_idx")
      .on(t.id)
      .where(sql`${t.status} = 'open'`),
  ],
);

/**
 * The usage records of a dispute, with what each held of its operator's earnings (its net). `open`
 * is true while the dispute is: a record is in at most one open dispute (the unique index). Only
 * `open` ever changes, once, from true to false (a trigger refuses anything else).
 */
export const disputeItems = pgTable(
  "dispute_items",
  {
    disputeId: uuid("dispute_id")
      .notNull()
      .references(() => disputes.id),
    usageId: uuid("usage_id")
      .notNull()
      .references(() => usageRecords.id),
    operatorId: text("operator_id").notNull(),
    assetId: uuid("asset_id")
      .notNull()
      .references(() => assets.id),
    net: numeric("net", { precision: 78, scale: 0 }).notNull(),
    open: boolean("open").notNull().default(true),
  },
  (t) => [
    primaryKey({ columns: [t.disputeId, t.usageId] }),
    uniqueIndex("dispute_items_open_usage_uq")
      .on(t.usageId)
      .where(sql`${t.open}`),
    index("dispute_items_operator_idx")
      .on(t.operatorId, t.assetId)
      .where(sql`${t.open}`),
    index("dispute_items_usage_idx").on(t.usageId),
    check("dispute_items_net", sql`${t.net} >= 0`),
  ],
);

/** Every state a dispute entered, when, by which key and why (append-only). */
export const disputeEvents = pgTable(
  "dispute_events",
  {
    id: bigserial("id", { mode: "bigint" }).primaryKey(),
    disputeId: uuid("dispute_id")
      .notNull()
      .references(() => disputes.id),
    status: text("status").notNull(),
    at: timestamp("at", { withTimezone: true }).notNull(),
    by: text("by").notNull(),
    detail: jsonb("detail").notNull().default({}),
  },
  (t) => [index("dispute_events_dispute_idx").on(t.disputeId, t.id)],
);

/**
 * A marketplace's dispute window, set by an admin: a usage record may be disputed until this many
 * days after it was booked (its created_at). Without a row: the default (src/domain/disputes.ts).
 */
export const marketplaceDisputeSettings = pgTable(
  "marketplace_dispute_settings",
  {
    marketplaceId: text("marketplace_id")
      .primaryKey()
      .references(() => marketplaces.id),
    disputeWindowDays: integer("dispute_window_days").notNull(),
    updatedBy: text("updated_by").notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull(),
  },
  (t) => [check("marketplace_dispute_settings_window", sql`${t.disputeWindowDays} between 0 and 3650`)],
);
