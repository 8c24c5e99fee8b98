import { sql } from "drizzle-orm";
import { bigint, check, index, numeric, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { accounts } from "./accounts.js";
import { assets } from "./assets.js";
import { transfers } from "./transfers.js";

/**
 * A reservation of a prepaid customer's funds for a running job. Opening it moves `amount` from the
 * customer's account to an escrow account of its own (`hold:{id}`, which cannot go below zero);
 * usage posted against the hold is paid from the escrow; closing it (or its expiry) moves what is
 * left back to the customer. The ledger holds the money; this row holds the hold's lifecycle.
 */
export const holds = pgTable(
  "holds",
  {
    id: uuid("id").primaryKey(),
    marketplaceId: text("marketplace_id").notNull(),
    customerId: text("customer_id").notNull(),
    assetId: uuid("asset_id")
      .notNull()
      .references(() => assets.id),
    amount: numeric("amount", { precision: 78, scale: 0 }).notNull(),
    escrowAccountId: uuid("escrow_account_id")
      .notNull()
      .references(() => accounts.id),
    openTransferId: uuid("open_transfer_id")
      .notNull()
      .references(() => transfers.id),
    /** open | closed | expired */
    status: text("status").notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true }),
    closedAt: timestamp("closed_at", { withTimezone: true }),
    closeTransferId: uuid("close_transfer_id"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    /** Id of the database transaction that wrote the row (opened it), for the event relay (src/db/event-relay.ts). */
    txid: bigint("txid", { mode: "bigint" }).default(sql`(pg_current_xact_id()::text)::bigint`),
  },
  (t) => [
    check("holds_status", sql`${t.status} in ('open', 'closed', 'expired')`),
    index("holds_expiry_idx")
      .on(t.expiresAt)
      .where(sql`${t.status} = 'open'`),
    index("holds_customer_idx").on(t.marketplaceId, t.customerId),
    index("holds_txid_idx").on(t.txid),
  ],
);
