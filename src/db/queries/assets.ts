import type { Asset } from "../../domain/assets.js";
import type { Queryable } from "../client.js";

export interface AssetRow {
  id: string; code: string; scale: number; settlement: "erc20" | "native" | "offchain";
  chain_id: string | null; token_address: string | null; created_at: Date | string;
}

export const ASSET_COLUMNS = "id, code, scale, settlement, chain_id::text as chain_id, token_address, created_at";

export function toAsset(r: AssetRow): Asset {
  const chainId = Number(r.chain_id);
  const settlement =
    r.settlement === "erc20" ? { kind: "erc20" as const, chainId, tokenAddress: r.token_address! }
    : r.settlement === "native" ? { kind: "native" as const, chainId }
    : { kind: "offchain" as const };
  return { id: r.id, code: r.code, scale: r.scale, settlement, createdAt: new Date(r.created_at) };
}

export async function getAssetByCode(db: Queryable, code: string): Promise<Asset | undefined> {
  const rows = await db.query<AssetRow & Record<string, unknown>>(`select ${ASSET_COLUMNS} from assets where code = $1`, [code]);
  return rows[0] && toAsset(rows[0]);
}

export async function getAsset(db: Queryable, id: string): Promise<Asset | undefined> {
  const rows = await db.query<AssetRow & Record<string, unknown>>(`select ${ASSET_COLUMNS} from assets where id = $1`, [id]);
  return rows[0] && toAsset(rows[0]);
}

export async function listAssets(db: Queryable, options: { afterCode?: string; limit: number }): Promise<Asset[]> {
  const rows = await db.query<AssetRow & Record<string, unknown>>(
    `select ${ASSET_COLUMNS} from assets where ($1::text is null or code > $1) order by code limit $2`,
    [options.afterCode ?? null, options.limit]);
  return rows.map(toAsset);
}

/** Inserts an asset; undefined when its code, or its chain and token, is taken. */
export async function insertAsset(
  db: Queryable,
  a: { id: string; code: string; scale: number; settlement: "erc20" | "native" | "offchain"; chainId: string | null; tokenAddress: string | null },
): Promise<Asset | undefined> {
  const inserted = await db.query<AssetRow & Record<string, unknown>>(
    `insert into assets (id, code, scale, settlement, chain_id, token_address) values ($1, $2, $3, $4, $5, $6)
     on conflict do nothing returning ${ASSET_COLUMNS}`,
    [a.id, a.code, a.scale, a.settlement, a.chainId, a.tokenAddress],
  );
  return inserted[0] && toAsset(inserted[0]);
}

/** The assets with these codes (codes without an asset are left out). */
export async function getAssetsByCodes(db: Queryable, codes: string[]): Promise<Asset[]> {
  const rows = await db.query<AssetRow & Record<string, unknown>>(`select ${ASSET_COLUMNS} from assets where code = any($1::text[])`, [`{${codes.map((c) => JSON.stringify(c)).join(",")}}`]);
  return rows.map(toAsset);
}
