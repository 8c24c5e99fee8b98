import { sql } from "drizzle-orm";
import { boolean, check, index, jsonb, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { assets } from "./assets.js";

/**
 * A ledger account. Its identity, asset, normal side and limit flags never change once created;
 * its balances live in account_balances so that the hot, frequently updated row stays narrow.
 */
export const accounts = pgTable(
  "accounts",
  {
    id: uuid("id").primaryKey(),
    assetId: uuid("asset_id")
      .notNull()
      .references(() => assets.id),
    /** Optional human key, unique per asset and marketplace, e.g. "operator:op_1:payable". */
    ref: text("ref"),
    /** Account type from the chart of accounts, e.g. "operator_payable", "protocol_fees". */
    code: text("code").notNull(),
    /** The marketplace whose key may see and use the account (customer and fee accounts); null for global ones. */
    marketplaceId: text("marketplace_id"),
    ownerType: text("owner_type"),
    ownerId: text("owner_id"),
    normalSide: text("normal_side").notNull(),
    debitsMustNotExceedCredits: boolean("debits_must_not_exceed_credits").notNull().default(false),
    creditsMustNotExceedDebits: boolean("credits_must_not_exceed_debits").notNull().default(false),
    metadata: jsonb("metadata").notNull().default({}),
    /**
     * Opened by the service itself (ensureAccounts: the chart of accounts — customers', operators',
     * fee, hold, clearing, treasury, in-transit and expense accounts), never through the API. Reports
     * count these by this flag, not by a ref a tenant could type, and tenant keys cannot post to them.
     */
    openedByService: boolean("opened_by_service").notNull().default(false),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    check("accounts_normal_side", sql`${t.normalSide} in ('debit', 'credit')`),
    check("accounts_one_limit", sql`not (${t.debitsMustNotExceedCredits} and ${t.creditsMustNotExceedDebits})`),
    // Unique (asset, marketplace, ref) where ref is set: an expression index, created in migration
    // 0003 (drizzle cannot declare it). Refs are per marketplace so that one marketplace cannot learn
    // of another's accounts through a clash.
    index("accounts_owner_idx").on(t.ownerType, t.ownerId),
    index("accounts_marketplace_idx").on(t.marketplaceId),
  ],
);
