import { sql } from "drizzle-orm";
import { bigint, bigserial, index, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { operators } from "./marketplaces.js";

/**
 * A message the service issued for an operator to sign with the address it wants paid to. Used once,
 * before it expires.
 */
export const payoutAddressChallenges = pgTable("payout_address_challenges", {
  id: uuid("id").primaryKey(),
  operatorId: text("operator_id")
    .notNull()
    .references(() => operators.id),
  chainId: bigint("chain_id", { mode: "bigint" }).notNull(),
  /** Lowercase 0x address. */
  address: text("address").notNull(),
  message: text("message").notNull(),
  expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  usedAt: timestamp("used_at", { withTimezone: true }),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

/** The verified address each operator is paid to, per chain. */
export const payoutAddresses = pgTable(
  "payout_addresses",
  {
    operatorId: text("operator_id")
      .notNull()
      .references(() => operators.id),
    chainId: bigint("chain_id", { mode: "bigint" }).notNull(),
    address: text("address").notNull(),
    challengeId: uuid("challenge_id")
      .notNull()
      .references(() => payoutAddressChallenges.id),
    verifiedAt: timestamp("verified_at", { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.operatorId, t.chainId] })],
);

/** Every change of a payout address, with its proof and who made it (append-only). */
export const payoutAddressEvents = pgTable(
  "payout_address_events",
  {
    id: bigserial("id", { mode: "bigint" }).primaryKey(),
    operatorId: text("operator_id").notNull(),
    chainId: bigint("chain_id", { mode: "bigint" }).notNull(),
    oldAddress: text("old_address"),
    newAddress: text("new_address").notNull(),
    challengeId: uuid("challenge_id").notNull(),
    signature: text("signature").notNull(),
    changedBy: text("changed_by").notNull(),
    requestId: text("request_id"),
    changedAt: timestamp("changed_at", { withTimezone: true }).notNull().defaultNow(),
    /** The writing transaction: the event relay derives `payout_address.changed` from it (docs/api.md, "Events"). */
    txid: bigint("txid", { mode: "bigint" }).default(sql`(pg_current_xact_id()::text)::bigint`),
  },
  (t) => [index("payout_address_events_operator_idx").on(t.operatorId, t.chainId, t.id), index("payout_address_events_txid_idx").on(t.txid)],
);
