import { sql } from "drizzle-orm";
import { bigint, bigserial, check, index, integer, jsonb, numeric, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { assets } from "./assets.js";
import { chainTransactions } from "./chain-transactions.js";
import { operators } from "./marketplaces.js";

/**
 * Money owed to an operator on its way out. Creating one places a ledger hold (a pending transfer
 * operator payable → payouts in transit); confirming it posts the hold and moves the amount out of
 * the treasury; failing it voids the hold. See docs/payouts.md for the state machine.
 */
export const payouts = pgTable(
  "payouts",
  {
    id: uuid("id").primaryKey(),
    operatorId: text("operator_id")
      .notNull()
      .references(() => operators.id),
    assetId: uuid("asset_id")
      .notNull()
      .references(() => assets.id),
    /** evm | none (off-chain: finance marks it paid) | convert (converted into the assets of `splits`, each paid by a payout of its own) */
    settlement: text("settlement").notNull(),
    chainId: bigint("chain_id", { mode: "bigint" }),
    toAddress: text("to_address"),
    amount: numeric("amount", { precision: 78, scale: 0 }).notNull(),
    /** pending | batched | signed | submitted | confirmed | failed */
    status: text("status").notNull(),
    /** request | schedule */
    trigger: text("trigger").notNull(),
    requestedBy: text("requested_by").notNull(),
    holdTransferId: uuid("hold_transfer_id").notNull().unique(),
    settleTransferId: uuid("settle_transfer_id"),
    chainTxId: uuid("chain_tx_id").references(() => chainTransactions.id),
    txHash: text("tx_hash"),
    blockNumber: bigint("block_number", { mode: "bigint" }),
    logIndex: integer("log_index"),
    externalReference: text("external_reference"),
    /** Chain transactions it was part of that ended without paying it. */
    unpaidAttempts: integer("unpaid_attempts").notNull().default(0),
    failureReason: text("failure_reason"),
    /** Why the worker is holding it back (e.g. gas above the policy's cap); cleared when it moves. */
    note: text("note"),
    /** null: none needed; required: waits for a second key (above the policy's approval threshold); approved. */
    approval: text("approval"),
    /** Of a convert payout: the operator's payout preference when it was requested, [{ asset_id, asset, bps }]. */
    splits: jsonb("splits"),
    /** Of a payout that pays part of a converted one: that payout. */
    parentPayoutId: uuid("parent_payout_id"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
    confirmedAt: timestamp("confirmed_at", { withTimezone: true }),
  },
  (t) => [
    check("payouts_status", sql`${t.status} in ('pending', 'batched', 'signed', 'submitted', 'confirmed', 'failed', 'converted')`),
    check("payouts_approval", sql`${t.approval} is null or ${t.approval} in ('required', 'approved')`),
    check(
      "payouts_settlement",
      sql`${t.settlement} in ('evm', 'none', 'convert') and (${t.settlement} = 'evm') = (${t.chainId} is not null) and (${t.settlement} = 'convert') = (${t.splits} is not null)`,
    ),
    check("payouts_amount", sql`${t.amount} >= 1`),
    index("payouts_queue_idx")
      .on(t.chainId, t.assetId, t.createdAt)
      .where(sql`${t.status} = 'pending'`),
    index("payouts_operator_idx").on(t.operatorId, t.id),
    /** GET /v1/payouts?requested_by=: what one key asked for (a revoked key's payouts, docs/operations.md). */
    index("payouts_requested_by_idx").on(t.requestedBy, t.id),
    index("payouts_chain_tx_idx").on(t.chainTxId),
    index("payouts_convert_queue_idx")
      .on(t.createdAt)
      .where(sql`${t.status} = 'pending' and ${t.settlement} = 'convert'`),
  ],
);

/** Every state a payout entered, when and why (append-only). */
export const payoutEvents = pgTable(
  "payout_events",
  {
    id: bigserial("id", { mode: "bigint" }).primaryKey(),
    payoutId: uuid("payout_id").notNull(),
    status: text("status").notNull(),
    detail: jsonb("detail").notNull().default({}),
    at: timestamp("at", { withTimezone: true }).notNull().defaultNow(),
    /** Id of the database transaction that wrote the row, for the event relay (src/db/event-relay.ts). */
    txid: bigint("txid", { mode: "bigint" }).default(sql`(pg_current_xact_id()::text)::bigint`),
  },
  (t) => [index("payout_events_payout_idx").on(t.payoutId, t.id), index("payout_events_txid_idx").on(t.txid)],
);
