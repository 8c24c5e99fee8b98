import { z } from "zod";
import { LedgerError } from "../domain/errors.js";
import { uuidv7 } from "../domain/ids.js";
import type { Database, Queryable } from "../db/client.js";
import { getAssetByCode, insertAsset } from "../db/queries/assets.js";
import { insertSettlementVersion } from "../db/queries/asset-settlements.js";
import { type Asset } from "../domain/assets.js";
import { inTransaction } from "./transaction.js";
import { parseInput } from "./validation.js";

/** How an asset settles, as registered or changed (proposeAssetSettlement). */
export const SettlementInput = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("erc20"),
    chainId: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
    tokenAddress: z.string().regex(/^0x[0-9a-fA-F]{40}$/, "must be a 20-byte hex address"),
  }),
  z.strictObject({ kind: z.literal("native"), chainId: z.number().int().positive().max(Number.MAX_SAFE_INTEGER) }),
  z.strictObject({ kind: z.literal("offchain") }),
]);

export const AssetInput = z.strictObject({
  code: z.string().regex(/^[A-Z0-9][A-Z0-9._-]{0,31}$/, "must be 1-32 characters of A-Z, 0-9, '.', '_' or '-'"),
  scale: z.number().int().min(0).max(77),
  settlement: SettlementInput,
  /** Conversions into and out of it use no rate observed longer ago (default 3,600 s). */
  rateMaxAgeSeconds: z.number().int().min(1).max(31_536_000).optional(),
  /** Conversions stop while two fresh sources of its rate are further apart (default 100 bps). */
  rateMaxDeviationBps: z.number().int().min(0).max(10_000).optional(),
});
export type AssetInput = z.infer<typeof AssetInput>;

/**
 * Registers an asset, with its settlement as version 1 of its history. Creating the same asset
 * twice returns the first one; the same code with different attributes is refused (asset_exists),
 * since amounts already recorded depend on them (how it settles changes by proposal:
 * proposeAssetSettlement).
 */
export async function createAsset(db: Database | Queryable, raw: AssetInput): Promise<Asset> {
  const input = parseInput(AssetInput, raw);
  const s = input.settlement;
  const chainId = s.kind === "offchain" ? null : String(s.chainId);
  const token = s.kind === "erc20" ? s.tokenAddress.toLowerCase() : null;
  const inserted = await inTransaction(db, async (tx) => {
    const asset = await insertAsset(tx, {
      id: uuidv7(),
      code: input.code,
      scale: input.scale,
      settlement: s.kind,
      chainId,
      tokenAddress: token,
      rateMaxAgeSeconds: input.rateMaxAgeSeconds,
      rateMaxDeviationBps: input.rateMaxDeviationBps,
    });
    if (asset)
      await insertSettlementVersion(tx, { assetId: asset.id, version: 1, settlement: s.kind, chainId, tokenAddress: token, validFrom: asset.createdAt });
    return asset;
  });
  if (inserted) return inserted;
  const existing = await getAssetByCode(db, input.code);
  const same =
    existing &&
    existing.scale === input.scale &&
    (input.rateMaxAgeSeconds === undefined || input.rateMaxAgeSeconds === existing.rateBounds.maxAgeSeconds) &&
    (input.rateMaxDeviationBps === undefined || input.rateMaxDeviationBps === existing.rateBounds.maxDeviationBps) &&
    JSON.stringify(existing.settlement) === JSON.stringify(s.kind === "erc20" ? { ...s, tokenAddress: token } : s);
  if (same) return existing;
  throw new LedgerError(
    "asset_exists",
    existing
      ? `asset ${input.code} already exists with different attributes${existing.scale === input.scale ? ` (how it settles changes by proposal: PATCH /v1/assets/${input.code})` : ""}`
      : token === null
        ? `another asset already settles as chain ${chainId}'s native token`
        : `another asset already settles as chain ${chainId} token ${token}`,
  );
}
