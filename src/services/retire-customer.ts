import type { Queryable } from "../db/client.js";
import { retireCustomerRow } from "../db/queries/party-updates.js";
import { LedgerError } from "../domain/errors.js";
import { getCustomer, type Customer } from "./marketplaces.js";
import { inTransaction } from "./transaction.js";

/**
 * Retires a customer (admin, its marketplace): from now on its new usage, holds and deposits are
 * refused (customer_retired); what it holds or owes stays, and can still be read, settled and
 * reversed. Final, like a revoked key. Retiring it again answers it as it was retired.
 */
export async function retireCustomer(db: Queryable, { now, marketplaceId, id }: { now: Date; marketplaceId: string; id: string }): Promise<Customer> {
  return inTransaction(db, async (tx) => {
    if (!(await getCustomer(tx, marketplaceId, id))) throw new LedgerError("customer_not_found", `customer ${id} does not exist`);
    await retireCustomerRow(tx, marketplaceId, id, now);
    return (await getCustomer(tx, marketplaceId, id))!;
  });
}
