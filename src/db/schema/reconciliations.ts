import { sql } from "drizzle-orm";
import { bigint, bigserial, check, index, integer, jsonb, numeric, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { assets } from "./assets.js";

/**
 * One comparison of the ledger's payouts with the chain over a block range, for one chain and
 * asset. Its items say, per payout or per on-chain payment, whether the two agree.
 */
export const reconciliations = pgTable(
  "reconciliations",
  {
    id: uuid("id").primaryKey(),
    chainId: bigint("chain_id", { mode: "bigint" }).notNull(),
    assetId: uuid("asset_id")
      .notNull()
      .references(() => assets.id),
    fromBlock: bigint("from_block", { mode: "bigint" }).notNull(),
    toBlock: bigint("to_block", { mode: "bigint" }).notNull(),
    /** Counts of items per status. */
    summary: jsonb("summary").notNull(),
    requestedBy: text("requested_by").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    /** Id of the database transaction that wrote the row, for the event relay (src/db/event-relay.ts). */
    txid: bigint("txid", { mode: "bigint" }).default(sql`(pg_current_xact_id()::text)::bigint`),
  },
  (t) => [index("reconciliations_txid_idx").on(t.txid)],
);

export const reconciliationItems = pgTable(
  "reconciliation_items",
  {
    id: bigserial("id", { mode: "bigint" }).primaryKey(),
    reconciliationId: uuid("reconciliation_id")
      .notNull()
      .references(() => reconciliations.id),
    /** matched | missing_on_chain | unexpected_on_chain | amount_mismatch | recipient_mismatch */
    status: text("status").notNull(),
    /** out: a payment from the treasury; in: a transfer into it */
    direction: text("direction").notNull(),
    payoutId: uuid("payout_id"),
    txHash: text("tx_hash"),
    logIndex: integer("log_index"),
    blockNumber: bigint("block_number", { mode: "bigint" }),
    ledgerAmount: numeric("ledger_amount", { precision: 78, scale: 0 }),
    chainAmount: numeric("chain_amount", { precision: 78, scale: 0 }),
    ledgerAddress: text("ledger_address"),
    chainAddress: text("chain_address"),
    detail: text("detail"),
    resolvedAt: timestamp("resolved_at", { withTimezone: true }),
    resolvedBy: text("resolved_by"),
    resolutionNote: text("resolution_note"),
    adjustmentTransferId: uuid("adjustment_transfer_id"),
    /** Id of the database transaction that wrote the row, for the event relay (src/db/event-relay.ts). */
    txid: bigint("txid", { mode: "bigint" }).default(sql`(pg_current_xact_id()::text)::bigint`),
  },
  (t) => [
    check("reconciliation_items_status", sql`${t.status} in ('matched', 'missing_on_chain', 'unexpected_on_chain', 'amount_mismatch', 'recipient_mismatch')`),
    check("reconciliation_items_direction", sql`${t.direction} in ('in', 'out')`),
    index("reconciliation_items_run_idx").on(t.reconciliationId, t.status, t.id),
    index("reconciliation_items_txid_idx").on(t.txid),
    // Transfers into the vault an adjustment recorded: the deposit scanner looks them up on every pass.
    index("reconciliation_items_adjusted_in_idx")
      .on(sql`lower(${t.txHash})`)
      .where(sql`${t.adjustmentTransferId} is not null and ${t.direction} = 'in'`),
  ],
);

/** Addresses a customer pays into the treasury from: transfers from them are credited to the customer. */
export const depositAddresses = pgTable(
  "deposit_addresses",
  {
    chainId: bigint("chain_id", { mode: "bigint" }).notNull(),
    address: text("address").notNull(),
    marketplaceId: text("marketplace_id").notNull(),
    customerId: text("customer_id").notNull(),
    createdBy: text("created_by").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.chainId, t.address] }), index("deposit_addresses_customer_idx").on(t.marketplaceId, t.customerId)],
);

/** Each inbound transfer credited to a customer, once (keyed by chain, transaction and log). */
export const chainDeposits = pgTable(
  "chain_deposits",
  {
    chainId: bigint("chain_id", { mode: "bigint" }).notNull(),
    txHash: text("tx_hash").notNull(),
    logIndex: integer("log_index").notNull(),
    assetId: uuid("asset_id")
      .notNull()
      .references(() => assets.id),
    fromAddress: text("from_address").notNull(),
    amount: numeric("amount", { precision: 78, scale: 0 }).notNull(),
    blockNumber: bigint("block_number", { mode: "bigint" }).notNull(),
    marketplaceId: text("marketplace_id").notNull(),
    customerId: text("customer_id").notNull(),
    transferId: uuid("transfer_id").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  // Never negative (a token transfer's value): a customer's money received is a sum of such amounts,
  // which the funding judgment's bound relies on (src/services/funding.ts). Read by marketplace and
  // asset (its customers' money, in funding judgments) and by customer (a deposit conversion's).
  (t) => [
    primaryKey({ columns: [t.chainId, t.txHash, t.logIndex] }),
    check("chain_deposits_amount", sql`${t.amount} >= 0`),
    index("chain_deposits_customer_idx").on(t.marketplaceId, t.assetId, t.customerId),
  ],
);

/** Every mutating API call: who, what, when, with which outcome (append-only). */
export const auditLog = pgTable(
  "audit_log",
  {
    id: bigserial("id", { mode: "bigint" }).primaryKey(),
    at: timestamp("at", { withTimezone: true }).notNull().defaultNow(),
    keyId: text("key_id"),
    role: text("role"),
    scopeId: text("scope_id"),
    method: text("method").notNull(),
    path: text("path").notNull(),
    route: text("route"),
    status: integer("status").notNull(),
    /** The service's id of the request (unique). */
    requestId: text("request_id").notNull(),
    /** The X-Request-Id the client sent, if any: the client's own label, not trusted to be unique. */
    clientRequestId: text("client_request_id"),
    idempotencyKey: text("idempotency_key"),
    bodySha256: text("body_sha256"),
    bodyBytes: integer("body_bytes"),
  },
  (t) => [index("audit_log_key_idx").on(t.keyId, t.id)],
);

/** How far the deposit scanner has read each chain and asset. */
export const chainCursors = pgTable(
  "chain_cursors",
  {
    chainId: bigint("chain_id", { mode: "bigint" }).notNull(),
    assetId: uuid("asset_id").notNull(),
    nextBlock: bigint("next_block", { mode: "bigint" }).notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.chainId, t.assetId] })],
);

/**
 * Transfers into the vault that the deposit scanner (or a reconciliation) did not credit because a
 * receipt proposal named their transaction: kept so that, if the proposal is rejected, they are
 * credited from what was read then (src/services/chain-deposits.ts, recheckRejectedReceipts).
 */
export const receiptNamedDeposits = pgTable(
  "receipt_named_deposits",
  {
    chainId: bigint("chain_id", { mode: "bigint" }).notNull(),
    txHash: text("tx_hash").notNull(),
    logIndex: integer("log_index").notNull(),
    assetId: uuid("asset_id").notNull(),
    fromAddress: text("from_address").notNull(),
    amount: numeric("amount", { precision: 78, scale: 0 }).notNull(),
    blockNumber: bigint("block_number", { mode: "bigint" }).notNull(),
    seenAt: timestamp("seen_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.chainId, t.txHash, t.logIndex] }), check("receipt_named_deposits_amount", sql`${t.amount} >= 0`)],
);

/**
 * Receipt proposals the deposit scanner has looked at again after they were rejected: the deposits
 * a rejected receipt named (skipped while it stood) are credited then, once per chain.
 */
export const receiptRechecks = pgTable(
  "receipt_rechecks",
  {
    proposalId: uuid("proposal_id").notNull(),
    chainId: bigint("chain_id", { mode: "bigint" }).notNull(),
    checkedAt: timestamp("checked_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.proposalId, t.chainId] })],
);
