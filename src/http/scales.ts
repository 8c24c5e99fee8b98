import type { Queryable } from "../services/context.js";
import { getAccounts, getAssetScales } from "../services/reads.js";

/**
 * The scales an answer's display twins are formatted at (src/http/display.ts), by asset id. An
 * asset's scale never changes, so a write's answer can be made with scales looked up before it.
 */
export type Scales = ReadonlyMap<string, number>;

/** The scale of each of these assets that exists. */
export function assetScales(db: Queryable, assetIds: Iterable<string>): Promise<Scales> {
  return getAssetScales(db, [...assetIds]);
}

/**
 * The scales of the assets of these accounts, and whether every account was found: only then is the
 * scale of every amount a transfer on them can move known before it is written (an unknown account
 * is refused by the write).
 */
export async function accountScales(db: Queryable, accountIds: readonly string[]): Promise<{ scales: Scales; complete: boolean }> {
  const ids = [...new Set(accountIds)];
  const accounts = await getAccounts(db, ids);
  return { scales: await assetScales(db, new Set(accounts.map((a) => a.assetId))), complete: accounts.length === ids.length };
}

/** The scale of an asset in `scales`; an answer's asset always exists, so a missing one is a bug. */
export function scaleIn(scales: Scales, assetId: string): number {
  const scale = scales.get(assetId);
  if (scale === undefined) throw new Error(`no scale known for asset ${assetId}`);
  return scale;
}
