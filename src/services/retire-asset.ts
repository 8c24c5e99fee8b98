import type { Queryable } from "../db/client.js";
import { accountsInRetiredAssets as findAccountsInRetiredAssets, lockAssetByCode, retireAssetRow } from "../db/queries/assets.js";
import { assetRetired, type Asset } from "../domain/assets.js";
import { LedgerError } from "../domain/errors.js";
import { inTransaction } from "./transaction.js";

/**
 * Retires an asset (admin): from now on no new accounts, transfers, usage, holds or deposits in it
 * (asset_retired). What is in it stays: balances can be read, operators' payables paid out,
 * receipts recorded for usage already rated, holds posted or voided, transfers reversed. Final
 * (the database refuses to clear it); retiring it again answers it as it was retired.
 */
export async function retireAsset(db: Queryable, { now, code }: { now: Date; code: string }): Promise<Asset> {
  return inTransaction(db, async (tx) => {
    const asset = await lockAssetByCode(tx, code);
    if (!asset) throw new LedgerError("asset_not_found", `asset ${code} does not exist`);
    return retireAssetRow(tx, asset.id, now);
  });
}

/** Among these accounts, those in a retired asset, each with the refusal to answer (asset_retired). */
export async function accountsInRetiredAssets(db: Queryable, accountIds: string[]): Promise<Map<string, LedgerError>> {
  const retired = await findAccountsInRetiredAssets(db, [...new Set(accountIds)]);
  return new Map([...retired].map(([id, a]) => [id, assetRetired(a.code, a.retiredAt)]));
}
