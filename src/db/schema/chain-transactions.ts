import { sql } from "drizzle-orm";
import { bigint, check, index, integer, numeric, pgTable, primaryKey, text, timestamp, unique, uuid } from "drizzle-orm/pg-core";
import { assets } from "./assets.js";

/**
 * The next nonce of each signing address, per chain. The database, not the node, is the source of
 * truth: a nonce is taken in the same transaction that stores the transaction signed with it.
 */
export const chainSenders = pgTable(
  "chain_senders",
  {
    chainId: bigint("chain_id", { mode: "bigint" }).notNull(),
    address: text("address").notNull(),
    nextNonce: bigint("next_nonce", { mode: "bigint" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.chainId, t.address] })],
);

/**
 * One on-chain transaction of the treasury: a batch of payouts of one asset (pay many operators in
 * one call of the payout vault). Its life: batched (payouts grouped) → signed (nonce taken and the
 * signed bytes stored before anything is broadcast) → submitted → confirmed | failed. Each signed
 * variant (a replacement with a higher fee under the same nonce) is an attempt.
 */
export const chainTransactions = pgTable(
  "chain_transactions",
  {
    id: uuid("id").primaryKey(),
    chainId: bigint("chain_id", { mode: "bigint" }).notNull(),
    assetId: uuid("asset_id")
      .notNull()
      .references(() => assets.id),
    sender: text("sender").notNull(),
    /** batched | signed | submitted | confirmed | failed */
    status: text("status").notNull(),
    nonce: bigint("nonce", { mode: "bigint" }),
    /** The chain's head when it was signed: no attempt can be mined before it. */
    signedBlock: bigint("signed_block", { mode: "bigint" }),
    toAddress: text("to_address"),
    data: text("data"),
    value: numeric("value", { precision: 78, scale: 0 }),
    gasLimit: numeric("gas_limit", { precision: 78, scale: 0 }),
    /** The attempt that was mined. */
    txHash: text("tx_hash"),
    blockNumber: bigint("block_number", { mode: "bigint" }),
    blockHash: text("block_hash"),
    gasUsed: numeric("gas_used", { precision: 78, scale: 0 }),
    /** Gas paid, in the chain's native asset (gas used × effective gas price). */
    fee: numeric("fee", { precision: 78, scale: 0 }),
    gasTransferId: uuid("gas_transfer_id"),
    failureReason: text("failure_reason"),
    lastError: text("last_error"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    check("chain_transactions_status", sql`${t.status} in ('batched', 'signed', 'submitted', 'confirmed', 'failed')`),
    unique("chain_transactions_nonce").on(t.chainId, t.sender, t.nonce),
    index("chain_transactions_open_idx")
      .on(t.chainId, t.status)
      .where(sql`${t.status} in ('batched', 'signed', 'submitted')`),
  ],
);

/** Every signed variant of a chain transaction, kept for as long as any of them may be mined. */
export const chainTxAttempts = pgTable(
  "chain_tx_attempts",
  {
    hash: text("hash").primaryKey(),
    chainTxId: uuid("chain_tx_id")
      .notNull()
      .references(() => chainTransactions.id),
    attempt: integer("attempt").notNull(),
    raw: text("raw").notNull(),
    maxFeePerGas: numeric("max_fee_per_gas", { precision: 78, scale: 0 }).notNull(),
    maxPriorityFeePerGas: numeric("max_priority_fee_per_gas", { precision: 78, scale: 0 }).notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    broadcastAt: timestamp("broadcast_at", { withTimezone: true }),
  },
  (t) => [unique("chain_tx_attempts_attempt").on(t.chainTxId, t.attempt)],
);
