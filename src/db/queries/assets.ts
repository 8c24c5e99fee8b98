import { and, asc, eq, gt, inArray, isNotNull, isNull, sql } from "drizzle-orm";
import type { Asset } from "../../domain/assets.js";
import type { Queryable } from "../client.js";
import { orm, run } from "../orm.js";
import { accounts, assets } from "../schema/index.js";

export interface AssetRow {
  id: string;
  code: string;
  scale: number;
  settlement: "erc20" | "native" | "offchain";
  chain_id: string | null;
  token_address: string | null;
  created_at: Date | string;
  retired_at: Date | string | null;
  rate_max_age_seconds: number;
  rate_max_deviation_bps: number;
}

export const ASSET_COLUMNS =
  "id, code, scale, settlement, chain_id::text as chain_id, token_address, created_at, retired_at, rate_max_age_seconds, rate_max_deviation_bps";

/** The columns of ASSET_COLUMNS, for the query builder. */
const assetFields = {
  id: assets.id,
  code: assets.code,
  scale: assets.scale,
  settlement: sql<AssetRow["settlement"]>`${assets.settlement}`,
  chain_id: sql<string | null>`${assets.chainId}::text`,
  token_address: assets.tokenAddress,
  created_at: assets.createdAt,
  retired_at: assets.retiredAt,
  rate_max_age_seconds: assets.rateMaxAgeSeconds,
  rate_max_deviation_bps: assets.rateMaxDeviationBps,
};

export function toAsset(r: AssetRow): Asset {
  const chainId = Number(r.chain_id);
  const settlement =
    r.settlement === "erc20"
      ? { kind: "erc20" as const, chainId, tokenAddress: r.token_address! }
      : r.settlement === "native"
        ? { kind: "native" as const, chainId }
        : { kind: "offchain" as const };
  return {
    id: r.id,
    code: r.code,
    scale: r.scale,
    settlement,
    createdAt: new Date(r.created_at),
    retiredAt: r.retired_at === null ? null : new Date(r.retired_at),
    rateBounds: { maxAgeSeconds: r.rate_max_age_seconds, maxDeviationBps: r.rate_max_deviation_bps },
  };
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
  a: {
    id: string;
    code: string;
    scale: number;
    settlement: "erc20" | "native" | "offchain";
    chainId: string | null;
    tokenAddress: string | null;
    rateMaxAgeSeconds?: number;
    rateMaxDeviationBps?: number;
  },
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
        ...(a.rateMaxAgeSeconds === undefined ? {} : { rateMaxAgeSeconds: a.rateMaxAgeSeconds }),
        ...(a.rateMaxDeviationBps === undefined ? {} : { rateMaxDeviationBps: a.rateMaxDeviationBps }),
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

/** The scale (decimals) of each of these assets, by id: what a read needs to show its amounts in display units. */
export async function getAssetScales(db: Queryable, ids: string[]): Promise<Map<string, number>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await run(orm(db).select({ id: assets.id, scale: assets.scale }).from(assets).where(inArray(assets.id, unique)));
  return new Map(rows.map((r) => [r.id, r.scale]));
}

/** The asset with this code, its row locked until the transaction ends (its settlement changes, or it is retired, one at a time). */
export async function lockAssetByCode(tx: Queryable, code: string): Promise<Asset | undefined> {
  const rows = await run(orm(tx).select(assetFields).from(assets).where(eq(assets.code, code)).for("update"));
  return rows[0] && toAsset(rows[0]);
}

/** Sets how an asset settles (the caller records the version in asset_settlements). */
export async function updateAssetSettlement(
  tx: Queryable,
  id: string,
  s: { settlement: "erc20" | "native" | "offchain"; chainId: string | null; tokenAddress: string | null },
): Promise<Asset> {
  const rows = await run(
    orm(tx)
      .update(assets)
      .set({ settlement: s.settlement, chainId: s.chainId === null ? null : BigInt(s.chainId), tokenAddress: s.tokenAddress })
      .where(eq(assets.id, id))
      .returning(assetFields),
  );
  return toAsset(rows[0]!);
}

/** Retires an asset at `at`; one retired already keeps its first retirement. */
export async function retireAssetRow(tx: Queryable, id: string, at: Date): Promise<Asset> {
  await run(
    orm(tx)
      .update(assets)
      .set({ retiredAt: at })
      .where(and(eq(assets.id, id), isNull(assets.retiredAt))),
  );
  return (await getAsset(tx, id))!;
}

/** Among these accounts, those whose asset is retired, with the asset's code and retirement. */
export async function accountsInRetiredAssets(db: Queryable, accountIds: string[]): Promise<Map<string, { code: string; retiredAt: Date }>> {
  if (accountIds.length === 0) return new Map();
  const rows = await run(
    orm(db)
      .select({ id: accounts.id, code: assets.code, retired_at: assets.retiredAt })
      .from(accounts)
      .innerJoin(assets, eq(assets.id, accounts.assetId))
      .where(and(inArray(accounts.id, accountIds), isNotNull(assets.retiredAt))),
  );
  return new Map(rows.map((r) => [r.id, { code: r.code, retiredAt: new Date(r.retired_at!) }]));
}

/** The asset that settles as this token on this chain, if any (no two may: assets_chain_token_uq). */
export async function findAssetByToken(db: Queryable, chainId: string, tokenAddress: string): Promise<Asset | undefined> {
  const rows = await run(
    orm(db)
      .select(assetFields)
      .from(assets)
      .where(and(eq(assets.chainId, BigInt(chainId)), eq(assets.tokenAddress, tokenAddress))),
  );
  return rows[0] && toAsset(rows[0]);
}

/** Sets an asset's rate bounds (an approved proposal's). */
export async function updateAssetRateBounds(tx: Queryable, id: string, maxAgeSeconds: number, maxDeviationBps: number): Promise<void> {
  await run(orm(tx).update(assets).set({ rateMaxAgeSeconds: maxAgeSeconds, rateMaxDeviationBps: maxDeviationBps }).where(eq(assets.id, id)));
}
