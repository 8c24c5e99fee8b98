import { z } from "zod";
import type { Queryable } from "../db/client.js";
import { updateCustomerMetadata } from "../db/queries/party-updates.js";
import { LedgerError } from "../domain/errors.js";
import { getCustomer, type Customer } from "./marketplaces.js";
import { inTransaction } from "./transaction.js";
import { parseInput } from "./validation.js";

/** What describes a customer and may change: its metadata (replaced as a whole). Its billing decides its accounts and is fixed. */
export const CustomerChange = z.strictObject({ metadata: z.record(z.string(), z.unknown()) });

/** Replaces a customer's metadata (admin, its marketplace). */
export async function updateCustomer(
  db: Queryable,
  { marketplaceId, id, change: raw }: { marketplaceId: string; id: string; change: z.input<typeof CustomerChange> },
): Promise<Customer> {
  const change = parseInput(CustomerChange, raw);
  return inTransaction(db, async (tx) => {
    if (!(await updateCustomerMetadata(tx, marketplaceId, id, change.metadata))) throw new LedgerError("customer_not_found", `customer ${id} does not exist`);
    return (await getCustomer(tx, marketplaceId, id))!;
  });
}
