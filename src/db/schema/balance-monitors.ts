import { sql } from "drizzle-orm";
import { check, index, numeric, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { accounts } from "./accounts.js";

/**
 * A threshold on one account's balance (docs/api.md, "Balance monitors"). The event relay evaluates
 * the monitors of the accounts its step touched, set-based, and emits balance.threshold.crossed when
 * the balance goes past the threshold (below it for `below`, above it for `above`) and
 * balance.threshold.recovered when it comes back past the threshold by at least `hysteresis`, so a
 * balance hovering at the line fires once. `state` is where the monitor stands: ok | crossed.
 *
 * Owner scope as for events: marketplace_id / operator_id of the key that created it (both null:
 * admin or finance).
 */
export const balanceMonitors = pgTable(
  "balance_monitors",
  {
    id: uuid("id").primaryKey(),
    marketplaceId: text("marketplace_id"),
    operatorId: text("operator_id"),
    accountId: uuid("account_id")
      .notNull()
      .references(() => accounts.id),
    /** below | above */
    direction: text("direction").notNull(),
    /** posted | available: which balance of the account is watched, on its normal side. */
    balance: text("balance").notNull(),
    threshold: numeric("threshold", { precision: 78, scale: 0 }).notNull(),
    hysteresis: numeric("hysteresis", { precision: 78, scale: 0 }).notNull(),
    state: text("state").notNull().default("ok"),
    /** The balance last evaluated, and when the state last changed. */
    lastBalance: numeric("last_balance", { precision: 78, scale: 0 }),
    changedAt: timestamp("changed_at", { withTimezone: true }),
    createdBy: text("created_by").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull(),
  },
  (t) => [
    check("balance_monitors_direction", sql`${t.direction} in ('below', 'above')`),
    check("balance_monitors_balance", sql`${t.balance} in ('posted', 'available')`),
    check("balance_monitors_state", sql`${t.state} in ('ok', 'crossed')`),
    check("balance_monitors_hysteresis", sql`${t.hysteresis} >= 0`),
    index("balance_monitors_account_idx").on(t.accountId),
    index("balance_monitors_marketplace_idx").on(t.marketplaceId, t.id),
    index("balance_monitors_operator_idx").on(t.operatorId, t.id),
  ],
);
