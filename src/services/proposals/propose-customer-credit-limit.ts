import type { Queryable } from "../../db/client.js";
import { findCustomerAccountId, lockCustomerOwes } from "../../db/queries/parties.js";
import { chart } from "../../domain/chart.js";
import { type Asset } from "../../domain/assets.js";
import { LedgerError } from "../../domain/errors.js";
import { isTransferAmount } from "../../domain/money.js";
import { getCustomer } from "../marketplaces.js";
import { mayPropose, openOrInsert, requireAsset, type Proposal, type Proposing } from "./proposal.js";

/**
 * Proposes a postpaid customer's credit limit in an asset (how much it may owe). A limit below what
 * the customer owes now is refused: finance stops new usage by setting it to what is owed.
 */
export async function proposeCustomerCreditLimit(
  db: Queryable,
  { now, by, ...input }: Proposing<{ marketplaceId: string; customerId: string; asset: string; creditLimit: bigint }>,
): Promise<Proposal> {
  mayPropose(by, "customer_credit_limit");
  const customer = await getCustomer(db, input.marketplaceId, input.customerId);
  if (!customer) throw new LedgerError("customer_not_found", `customer ${input.customerId} of marketplace ${input.marketplaceId} does not exist`);
  if (customer.billing !== "postpaid") {
    throw new LedgerError("invalid_request", `customer ${input.customerId} is prepaid: it spends what it deposited and has no credit limit`, [
      { path: "id", message: "is prepaid" },
    ]);
  }
  const asset = await requireAsset(db, input.asset);
  if (input.creditLimit < 0n || !isTransferAmount(input.creditLimit + 1n)) {
    throw new LedgerError("invalid_request", "credit_limit must be an integer from 0 to 2^256 - 2", [{ path: "credit_limit", message: "out of range" }]);
  }
  await checkCustomerLimit(db, input.marketplaceId, input.customerId, asset, input.creditLimit);
  const payload = {
    marketplace_id: input.marketplaceId,
    customer_id: input.customerId,
    asset: asset.code,
    asset_id: asset.id,
    credit_limit: input.creditLimit.toString(),
  };
  return openOrInsert(db, now, by, "customer_credit_limit", input.marketplaceId, payload);
}

/** Refuses a customer credit limit below what the customer owes; answers the customer's account (opened if need be). */
export async function checkCustomerLimit(
  tx: Queryable,
  marketplaceId: string,
  customerId: string,
  asset: Asset,
  creditLimit: bigint,
): Promise<string | undefined> {
  const spec = chart.customer(asset.id, marketplaceId, customerId, false);
  const accountId = await findCustomerAccountId(tx, asset.id, marketplaceId, spec.ref);
  if (accountId === undefined) return undefined;
  const { owes } = await lockCustomerOwes(tx, accountId);
  if (creditLimit < owes) {
    const message = `customer ${customerId} owes ${owes} ${asset.code} (smallest units) now; its credit limit cannot be set below it (set it to ${owes} to refuse new usage)`;
    throw new LedgerError("invalid_request", message, [{ path: "credit_limit", message }]);
  }
  return accountId;
}
