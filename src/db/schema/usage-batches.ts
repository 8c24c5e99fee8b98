import { sql } from "drizzle-orm";
import { check, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";

/**
 * The log of a usage batch (POST /v1/usage/batch): its counts and, in usage_batch_rejections, its
 * refused records with the reasons. Written in the transaction of the batch's accepted records
 * (alone when none was accepted); one per marketplace, tenant and Idempotency-Key (the keys are
 * each tenant's own, as in idempotency_keys), so that a retry of the same request writes no second
 * log (docs/usage.md, "Batch log").
 */
export const usageBatches = pgTable(
  "usage_batches",
  {
    /** `ub_` and a UUID. */
    id: text("id").primaryKey(),
    marketplaceId: text("marketplace_id").notNull(),
    /** The Idempotency-Key as the client sent it. */
    idempotencyKey: text("idempotency_key"),
    /**
     * Whose Idempotency-Key it is: the tenant of the key that posted the batch (`admin`,
     * `marketplace:m1`, as in idempotency_keys). Null for a log written before it was kept.
     */
    tenant: text("tenant"),
    receivedAt: timestamp("received_at", { withTimezone: true }).notNull(),
    records: integer("records").notNull(),
    accepted: integer("accepted").notNull(),
    duplicate: integer("duplicate").notNull(),
    rejected: integer("rejected").notNull(),
    /** Accepted records per asset: [{ asset, records, gross }] (gross a decimal string in the asset's smallest unit). */
    totals: jsonb("totals").notNull().default([]),
  },
  (t) => [
    uniqueIndex("usage_batches_key_uq").on(t.marketplaceId, t.tenant, t.idempotencyKey),
    index("usage_batches_marketplace_idx").on(t.marketplaceId, t.receivedAt, t.id),
    index("usage_batches_received_idx").on(t.receivedAt, t.id),
    check(
      "usage_batches_counts",
      sql`${t.accepted} >= 0 and ${t.duplicate} >= 0 and ${t.rejected} >= 0 and ${t.accepted} + ${t.duplicate} + ${t.rejected} = ${t.records}`,
    ),
  ],
);

/** A record a usage batch refused: its place in the batch, its external id if it had a valid one, the problem's code, reason (at most 500 characters) and first field. */
export const usageBatchRejections = pgTable(
  "usage_batch_rejections",
  {
    batchId: text("batch_id").notNull(),
    recordIndex: integer("record_index").notNull(),
    externalId: text("external_id"),
    code: text("code").notNull(),
    reason: text("reason").notNull(),
    field: text("field"),
  },
  (t) => [primaryKey({ columns: [t.batchId, t.recordIndex] })],
);
