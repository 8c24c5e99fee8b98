import { LedgerError } from "../domain/errors.js";
import { refuseRetiredAsset } from "../domain/assets.js";
import { customerRetired } from "../domain/customers.js";
import type { Database } from "../db/client.js";
import { ensureAccounts } from "../db/ensure-accounts.js";
import { chart, specKey } from "../domain/chart.js";
import { getAssetByCode } from "../db/queries/assets.js";
import { marketplacePricing } from "../db/queries/conversions.js";
import type { TransferResult } from "../db/transfer-writer.js";
import type { TransferInput } from "../domain/transfers.js";
import type { LedgerContext, TransferSubmission } from "./context.js";
import { getCustomer } from "./marketplaces.js";

/**
 * Credits a customer's balance with funds the marketplace received for it (off-chain; on-chain
 * deposits are credited by the chain reader): deposit clearing of the marketplace → the customer.
 */
export async function depositForCustomer(
  ctx: LedgerContext,
  input: {
    marketplaceId: string;
    customerId: string;
    asset: string;
    amount: bigint;
    idempotencyKey: string;
    metadata?: Record<string, unknown>;
    /** The receipt of the API call that asked for it, written with the transfer. */
    receipt?: TransferSubmission["receipt"];
  },
): Promise<TransferResult> {
  const db: Database = ctx.db;
  const customer = await getCustomer(db, input.marketplaceId, input.customerId);
  if (!customer) throw new LedgerError("customer_not_found", `customer ${input.customerId} does not exist`);
  const asset = await getAssetByCode(db, input.asset);
  if (!asset) throw new LedgerError("asset_not_found", `asset ${input.asset} does not exist`, [{ path: "asset", message: "does not exist" }]);
  const pricing = await marketplacePricing(db, input.marketplaceId);
  if (pricing !== undefined && pricing.id !== asset.id) {
    // What a marketplace claims its customer paid is its own debt, in the currency it prices in.
    const message = `marketplace ${input.marketplaceId} prices in ${pricing.code}: the deposits it records for its customers are in ${pricing.code}`;
    throw new LedgerError("asset_mismatch", message, [{ path: "asset", message: `must be ${pricing.code}` }]);
  }
  // Retirement stops new business, not the settling of old: a postpaid customer's deposit pays
  // what it owes and is taken; a prepaid one's would fund usage that is refused.
  if (customer.billing === "prepaid") {
    if (customer.retiredAt !== null) throw customerRetired(input.marketplaceId, input.customerId, customer.retiredAt);
    refuseRetiredAsset(asset);
  }
  const from = chart.depositClearing(asset.id, input.marketplaceId);
  const to = chart.customer(asset.id, input.marketplaceId, input.customerId, customer.billing === "prepaid");
  const ids = await ensureAccounts(db, [from, to]);
  const transfer: TransferInput = {
    kind: "standard",
    idempotencyKey: input.idempotencyKey,
    metadata: { ...input.metadata, deposit_for: input.customerId },
    legs: [{ debitAccountId: ids.get(specKey(from))!, creditAccountId: ids.get(specKey(to))!, amount: input.amount }],
  };
  return ctx.transfers.submit({ input: transfer, receipt: input.receipt });
}
