import { LedgerError } from "./errors.js";

/** Refuses new usage, holds and deposits for a retired customer (docs/api.md, "Changing and retiring"). */
export function customerRetired(marketplaceId: string, customerId: string, at: Date): LedgerError {
  return new LedgerError(
    "customer_retired",
    `customer ${customerId} of marketplace ${marketplaceId} was retired at ${at.toISOString()}: it takes no new usage, holds or deposits (its balance can still be read and settled)`,
  );
}
