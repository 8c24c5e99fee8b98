import type { Database } from "../services/context.js";
import { getAccounts, getAssetByCode, getAssetScales } from "../services/reads.js";

/**
 * The scales an answer's display twins are formatted at (src/http/display.ts), by asset id. An
 * asset's scale never changes, so a write's answer can be made with scales looked up before it.
 */
export type Scales = ReadonlyMap<string, number>;

/**
 * What this process has read, per database, of the facts a scale follows from: each account's
 * asset, each asset's scale, each asset code's asset. None of them ever changes (accounts and
 * assets cannot be deleted; an account's asset and an asset's id, code and scale are fixed by
 * triggers: migrations/0014_accounts_opened_by_service.sql, 0026_asset_settings_and_retirement.sql),
 * so an entry never goes stale and only what is missing is read. Only what exists is kept (an
 * unknown id or code may exist later), and only what the database handle read outside any
 * transaction, so committed. Dropped whole once it holds more than MAX_KNOWN entries.
 */
interface Known {
  assetOfAccount: Map<string, string>;
  scaleOfAsset: Map<string, number>;
  assetOfCode: Map<string, string>;
}

const MAX_KNOWN = 100_000;
const knownByDb = new WeakMap<Database, Known>();

function known(db: Database): Known {
  const k = knownByDb.get(db);
  if (k && k.assetOfAccount.size + k.scaleOfAsset.size + k.assetOfCode.size <= MAX_KNOWN) return k;
  const fresh: Known = { assetOfAccount: new Map(), scaleOfAsset: new Map(), assetOfCode: new Map() };
  knownByDb.set(db, fresh);
  return fresh;
}

/** The scale of each of these assets that exists (one query for those not known yet). */
export async function assetScales(db: Database, assetIds: Iterable<string>): Promise<Scales> {
  const k = known(db);
  const ids = [...new Set(assetIds)];
  const missing = ids.filter((id) => !k.scaleOfAsset.has(id));
  if (missing.length > 0) for (const [id, scale] of await getAssetScales(db, missing)) k.scaleOfAsset.set(id, scale);
  const scales = new Map<string, number>();
  for (const id of ids) {
    const scale = k.scaleOfAsset.get(id);
    if (scale !== undefined) scales.set(id, scale);
  }
  return scales;
}

/**
 * The scales of the assets of these accounts, and whether every account was found: only then is the
 * scale of every amount a transfer on them can move known before it is written (an unknown account
 * is refused by the write). Accounts and assets already known are not read again.
 */
export async function accountScales(db: Database, accountIds: readonly string[]): Promise<{ scales: Scales; complete: boolean }> {
  const k = known(db);
  const ids = [...new Set(accountIds)];
  const missing = ids.filter((id) => !k.assetOfAccount.has(id));
  if (missing.length > 0) for (const a of await getAccounts(db, missing)) k.assetOfAccount.set(a.id, a.assetId);
  const assets = ids.flatMap((id) => k.assetOfAccount.get(id) ?? []);
  return { scales: await assetScales(db, assets), complete: assets.length === ids.length };
}

/** The scale of the asset with this code, by its id; undefined when there is no such asset. */
export async function codeScale(db: Database, code: string): Promise<Scales | undefined> {
  const k = known(db);
  let assetId = k.assetOfCode.get(code);
  if (assetId === undefined) {
    const asset = await getAssetByCode(db, code);
    if (!asset) return undefined;
    k.assetOfCode.set(code, asset.id);
    k.scaleOfAsset.set(asset.id, asset.scale);
    assetId = asset.id;
  }
  return assetScales(db, [assetId]);
}

/** The scale of an asset in `scales`; an answer's asset always exists, so a missing one is a bug. */
export function scaleIn(scales: Scales, assetId: string): number {
  const scale = scales.get(assetId);
  if (scale === undefined) throw new Error(`no scale known for asset ${assetId}`);
  return scale;
}
