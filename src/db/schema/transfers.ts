import { sql } from "drizzle-orm";
import { bigint, check, index, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";

/**
 * A journal entry. Immutable once written (a trigger rejects UPDATE, DELETE and TRUNCATE).
 * Its legs are the rows of `entries` that carry its id.
 *
 * kind:
 *  - standard: posts at once
 *  - pending: reserves (pending debits/credits) until posted, voided or expired at timeout_at
 *  - post_pending / void_pending / expire_pending: resolve the pending transfer pending_id
 *    (at most one resolution per pending transfer: unique index)
 *  - reversal: undoes the posted legs of reverses_id (at most once: unique index)
 */
export const transfers = pgTable(
  "transfers",
  {
    id: uuid("id").primaryKey(),
    /** Monotonic order of recording, for stable listing. */
    seq: bigint("seq", { mode: "bigint" }).generatedAlwaysAsIdentity().notNull(),
    idempotencyKey: text("idempotency_key").notNull(),
    /** sha256 of the canonical request: same key with a different hash is a conflict. */
    requestHash: text("request_hash").notNull(),
    kind: text("kind").notNull(),
    pendingId: uuid("pending_id"),
    reversesId: uuid("reverses_id"),
    timeoutAt: timestamp("timeout_at", { withTimezone: true }),
    effectiveAt: timestamp("effective_at", { withTimezone: true }).notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    metadata: jsonb("metadata").notNull().default({}),
    /** Id of the database transaction that wrote the row; the journal sealer uses it to cut batches. */
    txid: bigint("txid", { mode: "bigint" })
      .notNull()
      .default(sql`(pg_current_xact_id()::text)::bigint`),
  },
  (t) => [
    uniqueIndex("transfers_idempotency_key_uq").on(t.idempotencyKey),
    uniqueIndex("transfers_seq_uq").on(t.seq),
    uniqueIndex("transfers_pending_resolution_uq")
      .on(t.pendingId)
      .where(sql`${t.pendingId} is not null`),
    uniqueIndex("transfers_reversal_uq")
      .on(t.reversesId)
      .where(sql`${t.reversesId} is not null`),
    index("transfers_open_pending_idx")
      .on(t.timeoutAt)
      .where(sql`${t.kind} = 'pending' and ${t.timeoutAt} is not null`),
    index("transfers_txid_idx").on(t.txid),
    // The transfers the event relay turns into events one by one (usage transfers are one event per
    // batch): a partial index, so the relay never reads usage transfers, and usage inserts only
    // evaluate its predicate (nothing is added to it).
    index("transfers_events_idx")
      .on(t.txid)
      .where(sql`${t.idempotencyKey} not like 'usage:%'`),
    check("transfers_kind", sql`${t.kind} in ('standard', 'pending', 'post_pending', 'void_pending', 'expire_pending', 'reversal')`),
    check(
      "transfers_refs",
      sql`(${t.pendingId} is not null) = (${t.kind} in ('post_pending', 'void_pending', 'expire_pending'))
      and (${t.reversesId} is not null) = (${t.kind} = 'reversal')
      and (${t.timeoutAt} is null or ${t.kind} = 'pending')`,
    ),
  ],
);
