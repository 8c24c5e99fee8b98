import type { Queryable } from "../db/client.js";
import { getAssetByCode } from "../db/queries/assets.js";
import { marketplacePricingCodes, setMarketplacePricing, type RatePolicy } from "../db/queries/conversions.js";
import { lockMarketplaceFundingExclusive } from "../db/queries/funding.js";
import { refuseRetiredAsset } from "../domain/assets.js";
import { LedgerError } from "../domain/errors.js";
import { getMarketplace, type Party } from "./marketplaces.js";
import { inTransaction } from "./transaction.js";

/**
 * A marketplace's pricing currency (docs/settlement.md): the asset its usage is priced in, which
 * its operators' payout preferences convert from. Set by an admin.
 */

export interface PricedMarketplace extends Party {
  /** The pricing currency's code, or null. */
  pricingAsset: string | null;
  /** When its conversions' rate is fixed: at the operator's payout, or when the usage is earned. */
  ratePolicy: RatePolicy;
}

/** The marketplaces with their pricing currencies (one query for all of them). */
export async function withPricing(db: Queryable, marketplaces: Party[]): Promise<PricedMarketplace[]> {
  const codes = await marketplacePricingCodes(
    db,
    marketplaces.map((m) => m.id),
  );
  return marketplaces.map((m) => ({ ...m, pricingAsset: codes.get(m.id)?.code ?? null, ratePolicy: codes.get(m.id)?.ratePolicy ?? "at_payout" }));
}

/**
 * Sets a marketplace's pricing currency (an asset that exists and is not retired) and its rate
 * policy. The marketplace's funding lock, taken exclusively, waits for usage being written under the
 * old policy: every record follows exactly one policy.
 */
export async function setPricingCurrency(
  db: Queryable,
  { now, marketplaceId, asset: code, ratePolicy }: { now: Date; marketplaceId: string; asset: string; ratePolicy: RatePolicy },
): Promise<PricedMarketplace> {
  return inTransaction(db, async (tx) => {
    const marketplace = await getMarketplace(tx, marketplaceId);
    if (!marketplace) throw new LedgerError("marketplace_not_found", `marketplace ${marketplaceId} does not exist`);
    const asset = await getAssetByCode(tx, code);
    if (!asset) throw new LedgerError("asset_not_found", `asset ${code} does not exist`, [{ path: "asset", message: "does not exist" }]);
    refuseRetiredAsset(asset);
    await lockMarketplaceFundingExclusive(tx, marketplaceId);
    await setMarketplacePricing(tx, marketplaceId, asset.id, now, ratePolicy);
    return { ...marketplace, pricingAsset: asset.code, ratePolicy };
  });
}
