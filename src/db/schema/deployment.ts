import { sql } from "drizzle-orm";
import { boolean, check, pgTable, timestamp, uuid } from "drizzle-orm/pg-core";

/**
 * This ledger's own identity: one row, made the first time it is needed (not by the migration, so
 * that databases copied from one migrated template each get their own). Ids that reach a chain
 * (payout ids) are derived with it, so that two ledgers sharing a vault (staging and production)
 * never make the same id for the same request.
 */
export const deployment = pgTable(
  "deployment",
  {
    singleton: boolean("singleton").primaryKey().default(true),
    id: uuid("id").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [check("deployment_singleton", sql`${t.singleton}`)],
);
