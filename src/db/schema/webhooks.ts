import { sql } from "drizzle-orm";
import { bigint, boolean, check, index, integer, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { marketplaces, operators } from "./marketplaces.js";

/**
 * Webhook endpoints (docs/api.md, "Webhooks"). An endpoint belongs to one tenant: a marketplace
 * (marketplace_id), an operator (operator_id), or the platform (both null: finance and admin keys,
 * every event). Its secrets are stored encrypted (AES-256-GCM under WEBHOOK_SECRETS_KEY): the worker
 * must recover them to sign. `cursor` is the position of the last event delivered, so an endpoint's
 * events go out one at a time, in order; the lease (lease_token, lease_until) lets one worker at a
 * time deliver for it, and lapses when that worker dies.
 */
export const webhookEndpoints = pgTable(
  "webhook_endpoints",
  {
    id: uuid("id").primaryKey(),
    marketplaceId: text("marketplace_id").references(() => marketplaces.id),
    operatorId: text("operator_id").references(() => operators.id),
    url: text("url").notNull(),
    description: text("description"),
    /** Event types delivered; empty: every type. */
    eventTypes: text("event_types").array().notNull(),
    /** enabled | disabled | deleted */
    status: text("status").notNull(),
    /** Why it was disabled: failing (a day of failed attempts) or requested (PATCH); null while enabled. */
    disabledReason: text("disabled_reason"),
    secret: text("secret").notNull(),
    /** The secret before the last rotation, still signing beside the new one until previous_secret_until. */
    previousSecret: text("previous_secret"),
    previousSecretUntil: timestamp("previous_secret_until", { withTimezone: true }),
    cursor: bigint("cursor", { mode: "bigint" }).notNull(),
    /** Failed attempts at the event after cursor. */
    attempts: integer("attempts").notNull().default(0),
    failingSince: timestamp("failing_since", { withTimezone: true }),
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true }),
    leaseToken: uuid("lease_token"),
    leaseUntil: timestamp("lease_until", { withTimezone: true }),
    createdBy: text("created_by").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull(),
  },
  (t) => [
    check("webhook_endpoints_status", sql`${t.status} in ('enabled', 'disabled', 'deleted')`),
    check("webhook_endpoints_tenant", sql`${t.marketplaceId} is null or ${t.operatorId} is null`),
    check("webhook_endpoints_disabled", sql`(${t.status} = 'disabled') = (${t.disabledReason} is not null)`),
    index("webhook_endpoints_marketplace_idx").on(t.marketplaceId, t.id),
    index("webhook_endpoints_operator_idx").on(t.operatorId, t.id),
    index("webhook_endpoints_due_idx")
      .on(t.nextAttemptAt)
      .where(sql`${t.status} = 'enabled'`),
  ],
);

/**
 * The delivery log: one row per attempt to send an event to an endpoint (automatic or manual), with
 * the answer's status code and the latency. A manual redelivery is queued as a row with status
 * `pending`, which the worker sends once and completes.
 */
export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: uuid("id").primaryKey(),
    endpointId: uuid("endpoint_id")
      .notNull()
      .references(() => webhookEndpoints.id),
    eventPosition: bigint("event_position", { mode: "bigint" }).notNull(),
    eventId: text("event_id").notNull(),
    eventType: text("event_type").notNull(),
    /** 1, 2, … for the automatic attempts at one event; manual redeliveries count on from there. */
    attempt: integer("attempt").notNull(),
    manual: boolean("manual").notNull().default(false),
    /** pending (a manual redelivery not yet sent) | succeeded | failed */
    status: text("status").notNull(),
    statusCode: integer("status_code"),
    latencyMs: integer("latency_ms"),
    error: text("error"),
    requestedBy: text("requested_by"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull(),
    attemptedAt: timestamp("attempted_at", { withTimezone: true }),
  },
  (t) => [
    check("webhook_deliveries_status", sql`${t.status} in ('pending', 'succeeded', 'failed')`),
    check("webhook_deliveries_attempted", sql`(${t.status} = 'pending') = (${t.attemptedAt} is null)`),
    index("webhook_deliveries_endpoint_idx").on(t.endpointId, t.createdAt, t.id),
    index("webhook_deliveries_pending_idx")
      .on(t.endpointId, t.createdAt)
      .where(sql`${t.status} = 'pending'`),
  ],
);
