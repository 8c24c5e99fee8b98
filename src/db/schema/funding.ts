import { sql } from "drizzle-orm";
import { bigint, check, index, jsonb, numeric, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { assets } from "./assets.js";
import { marketplaces } from "./marketplaces.js";

/**
 * A movement of money or a limit change a person asked for (docs/ledger.md, "Four eyes"): nothing
 * happens until a different key approves it. Decided at most once.
 */
export const proposals = pgTable(
  "proposals",
  {
    id: uuid("id").primaryKey(),
    /** receipt | credit_limit | reconciliation_adjustment */
    kind: text("kind").notNull(),
    marketplaceId: text("marketplace_id"),
    /** What is asked, as the API received it (amounts as strings). */
    payload: jsonb("payload").notNull(),
    proposedBy: text("proposed_by").notNull(),
    proposedAt: timestamp("proposed_at", { withTimezone: true }).notNull(),
    status: text("status").notNull().default("proposed"),
    decidedBy: text("decided_by"),
    decidedAt: timestamp("decided_at", { withTimezone: true }),
    reason: text("reason"),
    /** What approving it did (e.g. the ledger transfer). */
    result: jsonb("result"),
    /** Id of the database transaction that last wrote the row (set by a trigger on update too), for the event relay. */
    txid: bigint("txid", { mode: "bigint" }).default(sql`(pg_current_xact_id()::text)::bigint`),
  },
  (t) => [
    check("proposals_status", sql`${t.status} in ('proposed', 'approved', 'rejected')`),
    check("proposals_decided", sql`(${t.status} = 'proposed') = (${t.decidedBy} is null)`),
    check("proposals_four_eyes", sql`${t.decidedBy} is null or ${t.decidedBy} <> ${t.proposedBy}`),
    index("proposals_status_idx").on(t.status, t.proposedAt),
    index("proposals_txid_idx").on(t.txid),
    // The proposals a marketplace or an operator key lists (its own party's, newest first).
    index("proposals_marketplace_idx").on(t.marketplaceId, t.id),
    index("proposals_operator_idx").on(sql`(${t.payload}->>'operator_id')`, t.id),
    // Money with one reference is received once: at most one receipt proposal per asset and
    // reference (as compared: letters and digits, case folded) that was not rejected.
    uniqueIndex("proposals_receipt_reference_uq")
      .on(sql`(${t.payload}->>'asset_id')`, sql`(${t.payload}->>'reference_key')`)
      .where(sql`${t.kind} = 'receipt' and ${t.status} <> 'rejected'`),
  ],
);

/**
 * Money the platform received for a marketplace, recorded by finance and approved by a second key:
 * for one of its customers (a deposit paid to the platform), or from the marketplace itself (a
 * settlement of what it owes). On-chain deposits of customers are in chain_deposits.
 */
export const fundsReceipts = pgTable(
  "funds_receipts",
  {
    id: uuid("id").primaryKey(),
    marketplaceId: text("marketplace_id")
      .notNull()
      .references(() => marketplaces.id),
    /** null: a settlement by the marketplace. */
    customerId: text("customer_id"),
    assetId: uuid("asset_id")
      .notNull()
      .references(() => assets.id),
    amount: numeric("amount", { precision: 78, scale: 0 }).notNull(),
    reference: text("reference").notNull(),
    /** The reference as compared: its letters and digits, case folded ("WIRE 2026-0042" and "wire20260042" are one). */
    referenceKey: text("reference_key").notNull(),
    transferId: uuid("transfer_id").notNull(),
    proposalId: uuid("proposal_id").notNull(),
    receivedAt: timestamp("received_at", { withTimezone: true }).notNull(),
  },
  (t) => [
    check("funds_receipts_amount", sql`${t.amount} > 0`),
    index("funds_receipts_marketplace_idx").on(t.marketplaceId, t.assetId),
    uniqueIndex("funds_receipts_reference_uq").on(t.assetId, t.referenceKey),
  ],
);

/**
 * How much of a marketplace's unpaid usage the platform advances to operators before the
 * marketplace settles it (default 0: none). Set through an approved proposal.
 */
export const marketplaceCreditLimits = pgTable(
  "marketplace_credit_limits",
  {
    marketplaceId: text("marketplace_id")
      .notNull()
      .references(() => marketplaces.id),
    assetId: uuid("asset_id")
      .notNull()
      .references(() => assets.id),
    creditLimit: numeric("credit_limit", { precision: 78, scale: 0 }).notNull(),
    proposalId: uuid("proposal_id").notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.marketplaceId, t.assetId] }), check("marketplace_credit_limits_amount", sql`${t.creditLimit} >= 0`)],
);

/**
 * Per marketplace and asset, the sum of the debits posted to its customers' accounts (the accounts
 * the service opened with codes customer_prepaid and customer_postpaid): kept by a trigger on
 * account_balances, in the statement that changes them (migrations/0037_customer_debit_totals.sql),
 * whoever writes. It bounds from above what the marketplace's usage needs beyond its customers' own
 * money, so the funding judgment reads one row where it summed every customer
 * (src/services/funding.ts). `npm run verify` checks it against the balances.
 */
export const customerDebitTotals = pgTable(
  "customer_debit_totals",
  {
    marketplaceId: text("marketplace_id").notNull(),
    assetId: uuid("asset_id").notNull(),
    /** Unbounded: a sum of many uint256 balances. */
    debitsPosted: numeric("debits_posted").notNull(),
  },
  // No check that it is not negative: PostgreSQL checks the row an upsert proposes before it finds
  // the conflict, and the trigger's upsert proposes the change (negative when debits fall).
  (t) => [primaryKey({ columns: [t.marketplaceId, t.assetId] })],
);
