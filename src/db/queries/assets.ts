import { asc, eq, gt, sql } from "drizzle-orm";
import type { Asset } from "../../domain/assets.js";
import type { Queryable } from "../client.js";
import { orm, run } from "../orm.js";
import { assets } from "../schema/index.js";

export interface AssetRow {
  id: string;
  code: string;
  scale: number;
  settlement: "erc20" | "native" | "offchain";
  chain_id: string | null;
  token_address: string | null;
  created_at: Date | string;
}

export const ASSET_COLUMNS = "id, code, scale, settlement, chain_id::text as chain_id, token_address, created_at";

/** The columns of ASSET_COLUMNS, for the query builder. */
const assetFields = {
  id: assets.id,
  code: assets.code,
  scale: assets.scale,
  settlement: sql<AssetRow["settlement"]>`${assets.settlement}`,
  chain_id: sql<string | null>`${assets.chainId}::text`,
  token_address: assets.tokenAddress,
  created_at: assets.createdAt,
};

export function toAsset(r: AssetRow): Asset {
  const chainId = Number(r.chain_id);
  const settlement =
    r.settlement === "erc20"
      ? { kind: "erc20" as const, chainId, tokenAddress: r.token_address! }
      : r.settlement === "native"
        ? { kind: "native" as const, chainId }
        : { kind: "offchain" as const };
  return { id: r.id, code: r.code, scale: r.scale, settlement, createdAt: new Date(r.created_at) };
}

export async function getAssetByCode(db: Queryable, code: string): Promise<Asset | undefined> {
  const rows = await run(orm(db).select(assetFields).from(assets).where(eq(assets.code, code)));
  return rows[0] && toAsset(rows[0]);
}

export async function getAsset(db: Queryable, id: string): Promise<Asset | undefined> {
  const rows = await run(orm(db).select(assetFields).from(assets).where(eq(assets.id, id)));
  return rows[0] && toAsset(rows[0]);
}

export async function listAssets(db: Queryable, options: { afterCode?: string; limit: number }): Promise<Asset[]> {
  const rows = await run(
    orm(db)
      .select(assetFields)
      .from(assets)
      .where(options.afterCode === undefined ? undefined : gt(assets.code, options.afterCode))
      .orderBy(asc(assets.code))
      .limit(options.limit),
  );
  return rows.map(toAsset);
}

/** Inserts an asset; undefined when its code, or its chain and token, is taken. */
export async function insertAsset(
  db: Queryable,
  a: { id: string; code: string; scale: number; settlement: "erc20" | "native" | "offchain"; chainId: string | null; tokenAddress: string | null },
): Promise<Asset | undefined> {
  const inserted = await run(
    orm(db)
      .insert(assets)
      .values({
        id: a.id,
        code: a.code,
        scale: a.scale,
        settlement: a.settlement,
        chainId: a.chainId === null ? null : BigInt(a.chainId),
        tokenAddress: a.tokenAddress,
      })
      .onConflictDoNothing()
      .returning(assetFields),
  );
  return inserted[0] && toAsset(inserted[0]);
}

/** The assets with these codes (codes without an asset are left out). */
export async function getAssetsByCodes(db: Queryable, codes: string[]): Promise<Asset[]> {
  const codeArray = `{${codes.map((c) => JSON.stringify(c)).join(",")}}`;
  const rows = await run(
    orm(db)
      .select(assetFields)
      .from(assets)
      .where(sql`${assets.code} = any(${codeArray}::text[])`),
  );
  return rows.map(toAsset);
}
