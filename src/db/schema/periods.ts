import { sql } from "drizzle-orm";
import { bigint, check, index, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { marketplaces } from "./marketplaces.js";

/**
 * A marketplace's accounting period that is not simply open (docs/reconciliation.md, "Month-end
 * close"): `closing` (no new back-dated usage or correction lands in it) or `closed` (nothing posts
 * with an effective time inside it; late records and corrections are booked in the open period).
 * A month without a row is open. The status changes by the rules of src/services/periods.ts: to
 * closing and back to open on one finance key, to closed and from closed back to open only on a
 * proposal a second key approves; each change is in the audit log.
 */
export const accountingPeriods = pgTable(
  "accounting_periods",
  {
    marketplaceId: text("marketplace_id")
      .notNull()
      .references(() => marketplaces.id),
    /** YYYY-MM in the marketplace's time zone. */
    period: text("period").notNull(),
    startsAt: timestamp("starts_at", { withTimezone: true }).notNull(),
    endsAt: timestamp("ends_at", { withTimezone: true }).notNull(),
    status: text("status").notNull(),
    changedBy: text("changed_by").notNull(),
    changedAt: timestamp("changed_at", { withTimezone: true }).notNull(),
    /** The approved proposal that closed (or reopened) it. */
    proposalId: uuid("proposal_id"),
    /** Id of the database transaction that last wrote the row (set by a trigger on update too), for the event relay. */
    txid: bigint("txid", { mode: "bigint" }).default(sql`(pg_current_xact_id()::text)::bigint`),
  },
  (t) => [
    primaryKey({ columns: [t.marketplaceId, t.period] }),
    check("accounting_periods_status", sql`${t.status} in ('open', 'closing', 'closed')`),
    check("accounting_periods_bounds", sql`${t.startsAt} < ${t.endsAt}`),
    index("accounting_periods_window_idx").on(t.marketplaceId, t.startsAt),
    index("accounting_periods_txid_idx").on(t.txid),
  ],
);
