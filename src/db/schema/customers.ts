import { sql } from "drizzle-orm";
import { check, jsonb, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";
import { marketplaces } from "./marketplaces.js";

/**
 * A customer of one marketplace. prepaid: usage draws on deposited funds and can never take the
 * balance below zero. postpaid: usage builds a receivable (a negative balance) to be settled later.
 */
export const customers = pgTable(
  "customers",
  {
    marketplaceId: text("marketplace_id")
      .notNull()
      .references(() => marketplaces.id),
    id: text("id").notNull(),
    billing: text("billing").notNull(),
    metadata: jsonb("metadata").notNull().default({}),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    /** When it was retired: no new usage, holds or deposits for it; its balance can still be read and settled. */
    retiredAt: timestamp("retired_at", { withTimezone: true }),
  },
  (t) => [primaryKey({ columns: [t.marketplaceId, t.id] }), check("customers_billing", sql`${t.billing} in ('prepaid', 'postpaid')`)],
);
