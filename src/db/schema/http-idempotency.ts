import { integer, jsonb, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";

/**
 * Responses of POST requests by (caller scope, Idempotency-Key), written in the same transaction
 * as the change they describe, so that a retry replays the original status and body.
 */
export const httpIdempotency = pgTable(
  "http_idempotency",
  {
    /** Who may replay it: the tenant of the key ("admin", "marketplace:m1", ...). */
    scope: text("scope").notNull(),
    key: text("key").notNull(),
    method: text("method").notNull(),
    path: text("path").notNull(),
    requestHash: text("request_hash").notNull(),
    status: integer("status").notNull(),
    body: jsonb("body").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.scope, t.key] })],
);
