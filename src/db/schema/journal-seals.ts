import { bigint, integer, pgTable, smallint, text, timestamp } from "drizzle-orm/pg-core";

/**
 * The journal's hash chain. Seal n covers every transfer whose txid lies in [from_txid, to_txid):
 * all of those database transactions had finished when the seal was cut (to_txid is the xmin of the
 * sealer's snapshot), so no transfer can later appear inside a sealed range.
 * hash = sha256(prev_hash || digest of the transfers and entries of the range, in seq order); the
 * digest's `format` is 1 (canonical JSON computed by the service) or 2 (row text computed by
 * PostgreSQL), see src/db/journal-seals.ts.
 */
export const journalSeals = pgTable("journal_seals", {
  id: bigint("id", { mode: "bigint" }).primaryKey(),
  fromTxid: bigint("from_txid", { mode: "bigint" }).notNull(),
  toTxid: bigint("to_txid", { mode: "bigint" }).notNull(),
  transferCount: integer("transfer_count").notNull(),
  prevHash: text("prev_hash").notNull(),
  hash: text("hash").notNull(),
  format: smallint("format").notNull().default(1),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});
