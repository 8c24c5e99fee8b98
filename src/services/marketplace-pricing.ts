import type { Queryable } from "../db/client.js";
import { getAssetByCode } from "../db/queries/assets.js";
import { marketplacePricingCodes, setMarketplacePricing } from "../db/queries/conversions.js";
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
}

/** The marketplaces with their pricing currencies (one query for all of them). */
export async function withPricing(db: Queryable, marketplaces: Party[]): Promise<PricedMarketplace[]> {
  const codes = await marketplacePricingCodes(
    db,
    marketplaces.map((m) => m.id),
  );
  return marketplaces.map((m) => ({ ...m, pricingAsset: codes.get(m.id) ?? null }));
}

/** Sets a marketplace's pricing currency: an asset that exists and is not retired. */
export async function setPricingCurrency(
  db: Queryable,
  { now, marketplaceId, asset: code }: { now: Date; marketplaceId: string; asset: string },
): Promise<PricedMarketplace> {
  return inTransaction(db, async (tx) => {
    const marketplace = await getMarketplace(tx, marketplaceId);
    if (!marketplace) throw new LedgerError("marketplace_not_found", `marketplace ${marketplaceId} does not exist`);
    const asset = await getAssetByCode(tx, code);
    if (!asset) throw new LedgerError("asset_not_found", `asset ${code} does not exist`, [{ path: "asset", message: "does not exist" }]);
    refuseRetiredAsset(asset);
    await setMarketplacePricing(tx, marketplaceId, asset.id, now);
    return { ...marketplace, pricingAsset: asset.code };
  });
}
