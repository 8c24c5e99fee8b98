import { sql } from "drizzle-orm";
import { check, index, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";

/**
 * API keys. The secret is shown once at creation and stored only as its SHA-256 (keys are 256-bit
 * random strings, so a slow hash adds nothing). `prefix` is the public part used to find the row.
 */
export const apiKeys = pgTable(
  "api_keys",
  {
    id: uuid("id").primaryKey(),
    prefix: text("prefix").notNull(),
    secretHash: text("secret_hash").notNull(),
    name: text("name").notNull(),
    /** admin | finance | marketplace | operator */
    role: text("role").notNull(),
    /** The marketplace or operator a scoped key acts for; null for admin and finance. */
    scopeId: text("scope_id"),
    /** The key that created it ("bootstrap-admin" for the key from the environment); null for keys created before this was recorded. */
    createdBy: text("created_by"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [
    uniqueIndex("api_keys_prefix_uq").on(t.prefix),
    index("api_keys_scope_idx").on(t.role, t.scopeId),
    check("api_keys_role", sql`${t.role} in ('admin', 'finance', 'marketplace', 'operator')`),
    check("api_keys_scope", sql`(${t.scopeId} is not null) = (${t.role} in ('marketplace', 'operator'))`),
  ],
);
