import { sql } from "drizzle-orm";
import { check, numeric, pgTable, uuid } from "drizzle-orm/pg-core";
import { accounts } from "./accounts.js";

const amount = (name: string) => numeric(name, { precision: 78, scale: 0 }).notNull().default("0");

/**
 * The four running totals of an account (TigerBeetle's model). Updated once per account per batch,
 * under a row lock taken in account-id order. Always equal to the sum of the account's entries.
 * Low fillfactor leaves room for HOT updates of the hot fee accounts.
 */
export const accountBalances = pgTable(
  "account_balances",
  {
    accountId: uuid("account_id")
      .primaryKey()
      .references(() => accounts.id),
    debitsPosted: amount("debits_posted"),
    creditsPosted: amount("credits_posted"),
    debitsPending: amount("debits_pending"),
    creditsPending: amount("credits_pending"),
    /**
     * How far the debits of an account with the no-overdraft limit may exceed its credits: a
     * postpaid customer's credit limit (0 for every other account). It lives beside the totals it
     * bounds, so that it is read and changed under the same row lock as they are.
     */
    overdraftLimit: amount("overdraft_limit"),
  },
  (t) => [
    check(
      "account_balances_non_negative",
      sql`${t.debitsPosted} >= 0 and ${t.creditsPosted} >= 0 and ${t.debitsPending} >= 0 and ${t.creditsPending} >= 0 and ${t.overdraftLimit} >= 0`,
    ),
  ],
);
