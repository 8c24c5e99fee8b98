import { sql } from "drizzle-orm";
import { bigint, check, index, integer, numeric, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";

/**
 * One side of one leg of a transfer, on one account. A leg is two entries (debit and credit) with
 * the same transfer_id and leg. Immutable.
 *
 * posted_amount moves the account's posted total on `side`; pending_amount moves its pending total
 * (positive when a hold is placed, negative when it is posted, voided or expires). The account's
 * four balances are, at any time, the sums of these columns over its entries.
 */
export const entries = pgTable(
  "entries",
  {
    id: bigint("id", { mode: "bigint" }).generatedAlwaysAsIdentity().primaryKey(),
    // No foreign keys on this, the largest and hottest table: per-row RI triggers cost more than the
    // rest of a batch insert (measured: 60,000 entries 3.2 s with them, 1.1 s without). The batch
    // writer only writes entries of transfers it inserts in the same transaction and of accounts it
    // has locked; transfers and accounts can never be deleted (triggers); `npm run verify` checks
    // that every reference resolves (check `references`).
    transferId: uuid("transfer_id").notNull(),
    leg: integer("leg").notNull(),
    accountId: uuid("account_id").notNull(),
    assetId: uuid("asset_id").notNull(),
    side: text("side").notNull(),
    postedAmount: numeric("posted_amount", { precision: 78, scale: 0 }).notNull(),
    pendingAmount: numeric("pending_amount", { precision: 78, scale: 0 }).notNull(),
    /** The account's posted balance on its normal side right after this entry (recording order). */
    balanceAfter: numeric("balance_after", { precision: 78, scale: 0 }).notNull(),
    effectiveAt: timestamp("effective_at", { withTimezone: true }).notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index("entries_account_id_idx").on(t.accountId, t.id),
    index("entries_account_effective_idx").on(t.accountId, t.effectiveAt),
    index("entries_transfer_idx").on(t.transferId),
    check("entries_side", sql`${t.side} in ('debit', 'credit')`),
    check("entries_posted_non_negative", sql`${t.postedAmount} >= 0`),
    check("entries_moves_something", sql`${t.postedAmount} <> 0 or ${t.pendingAmount} <> 0`),
  ],
);
