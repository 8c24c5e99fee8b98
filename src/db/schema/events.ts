import { sql } from "drizzle-orm";
import { bigint, check, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";

/**
 * The event log (docs/api.md, "Events"): what happened in the ledger, derived behind the writers
 * from the journal and the state tables by the event relay (src/db/event-relay.ts), never written
 * on the ingest path. Append-only. `position` is strictly increasing in the order events become
 * readable: only the relay appends (one at a time), and it only derives from database transactions
 * that had all finished (txid below its snapshot's xmin), so a reader by cursor never misses a
 * later-committed lower position.
 *
 * Tenant scope: a marketplace key reads the events whose marketplace_id is its own, an operator key
 * those whose operator_id is its own; both null: admin and finance only.
 */
export const events = pgTable(
  "events",
  {
    position: bigint("position", { mode: "bigint" }).primaryKey(),
    /** evt_<uuid>: the public id (and the Standard Webhooks webhook-id). */
    id: text("id").notNull(),
    type: text("type").notNull(),
    marketplaceId: text("marketplace_id"),
    operatorId: text("operator_id"),
    resourceType: text("resource_type").notNull(),
    resourceId: text("resource_id").notNull(),
    data: jsonb("data").notNull(),
    occurredAt: timestamp("occurred_at", { withTimezone: true }).notNull(),
  },
  (t) => [
    uniqueIndex("events_id_uq").on(t.id),
    index("events_marketplace_idx").on(t.marketplaceId, t.position),
    index("events_operator_idx").on(t.operatorId, t.position),
    index("events_type_idx").on(t.type, t.position),
    index("events_resource_idx").on(t.resourceType, t.resourceId, t.position),
  ],
);

/**
 * The relay's progress (one row): every source row written by a database transaction with a txid
 * below `watermark` has been turned into events; `last_position` is the last position appended.
 */
export const eventRelay = pgTable(
  "event_relay",
  {
    id: integer("id").primaryKey(),
    watermark: bigint("watermark", { mode: "bigint" }).notNull(),
    lastPosition: bigint("last_position", { mode: "bigint" }).notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [check("event_relay_single", sql`${t.id} = 1`)],
);
