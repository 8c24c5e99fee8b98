import type { Settlements } from "../chain/settlement.js";
import type { Queryable } from "../db/client.js";
import { getAssetByCode } from "../db/queries/assets.js";
import type { Asset } from "../domain/assets.js";
import { LedgerError } from "../domain/errors.js";

/** The chain an asset settles on, when it is the one asked for (reconciliation and the treasury check work on one chain). */
export function evmRoute(settlements: Settlements, asset: Asset, chainId: bigint) {
  const route = settlements.forAsset(asset);
  if (route.kind !== "evm" || route.chain.chainId !== chainId) {
    throw new LedgerError(
      "invalid_request",
      `asset ${asset.code} does not settle on chain ${chainId}${route.kind === "unconfigured" ? " (not configured here)" : ""}`,
      [{ path: "asset", message: "does not settle on this chain" }],
    );
  }
  return route;
}

/** The asset of a code, or a 404 problem naming it. */
export async function assetOrThrow(db: Queryable, code: string): Promise<Asset> {
  const asset = await getAssetByCode(db, code);
  if (!asset) throw new LedgerError("asset_not_found", `asset ${code} does not exist`, [{ path: "asset", message: "does not exist" }]);
  return asset;
}

export type EvmRoute = ReturnType<typeof evmRoute>;
