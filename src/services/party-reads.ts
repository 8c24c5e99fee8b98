import type { Queryable } from "../db/client.js";
import { listCustomerAccountRows, listCustomerRows, listMarketplaceRows, listOperatorRows } from "../db/queries/parties.js";
import { availableBalance, postedBalance } from "../domain/accounts.js";
import { getCustomer, toCustomer, toOperator, toParty, type Customer, type Operator, type Party } from "./marketplaces.js";

/**
 * The read side of marketplaces, operators and customers (GET /v1/marketplaces, /v1/operators,
 * /v1/customers). Who may see which is the routes' to decide (src/http/routes/party-access.ts);
 * these take the filters that carry it.
 */

/** Marketplaces in id order after `after`; with `id`, that one only. */
export async function listMarketplaces(db: Queryable, f: { id?: string; after?: string; limit: number }): Promise<Party[]> {
  return (await listMarketplaceRows(db, f)).map(toParty);
}

/** Operators in id order after `after`; with `id`, that one only; with `marketplaceId`, those linked to it. */
export async function listOperators(db: Queryable, f: { id?: string; marketplaceId?: string; after?: string; limit: number }): Promise<Operator[]> {
  return (await listOperatorRows(db, f)).map(toOperator);
}

/** Customers in (marketplace, id) order after `after`; with `marketplaceId`, that marketplace's only. */
export async function listCustomers(
  db: Queryable,
  f: { marketplaceId?: string; after?: { marketplaceId: string; id: string }; limit: number },
): Promise<Customer[]> {
  return (await listCustomerRows(db, f)).map(toCustomer);
}

/** A customer's balance in one asset: its account, what it holds and may spend, and (postpaid) how much it may owe. */
export interface CustomerAccount {
  asset: string;
  /** The asset's decimals, for display. */
  scale: number;
  accountId: string;
  /** Posted balance (negative: owed). */
  posted: bigint;
  /** Posted balance less open holds. */
  available: bigint;
  /** Postpaid: the credit limit in the asset; prepaid: null. */
  creditLimit: bigint | null;
}

/** A customer with its account in each asset it has one in (opened by its first deposit, usage or credit limit), by asset code. */
export async function getCustomerWithAccounts(
  db: Queryable,
  marketplaceId: string,
  id: string,
): Promise<(Customer & { accounts: CustomerAccount[] }) | undefined> {
  const customer = await getCustomer(db, marketplaceId, id);
  if (!customer) return undefined;
  const rows = await listCustomerAccountRows(db, marketplaceId, id);
  const accounts = rows.map((r): CustomerAccount => {
    const b = {
      debitsPosted: BigInt(r.debits_posted),
      creditsPosted: BigInt(r.credits_posted),
      debitsPending: BigInt(r.debits_pending),
      creditsPending: BigInt(r.credits_pending),
    };
    return {
      asset: r.asset,
      scale: r.scale,
      accountId: r.account_id,
      posted: postedBalance(r.normal_side, b),
      available: availableBalance(r.normal_side, b),
      creditLimit: customer.billing === "postpaid" ? BigInt(r.overdraft_limit) : null,
    };
  });
  return { ...customer, accounts };
}
