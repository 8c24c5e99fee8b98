import type { Settlements } from "../chain/settlement.js";
import type { Queryable } from "../db/client.js";
import { insertPreference, latestRate, preferenceVersions, type PreferenceRow } from "../db/queries/conversions.js";
import type { PayoutSplit } from "../db/queries/payout-row.js";
import { getAsset, getAssetByCode } from "../db/queries/assets.js";
import { getPayoutAddress } from "../db/queries/payouts.js";
import { refuseRetiredAsset, type Asset } from "../domain/assets.js";
import { LedgerError } from "../domain/errors.js";
import { getOperator } from "./marketplaces.js";
import { feedFor } from "./rates.js";
import { inTransaction } from "./transaction.js";

/**
 * An operator's payout preference for its earnings in one asset (docs/settlement.md): the assets it
 * is paid in, split by basis points. Set by the operator's own key; each change is a new version,
 * and a payout keeps the version in force when it was requested.
 */

export interface PreferenceInput {
  operatorId: string;
  /** The asset its earnings are in. */
  asset: string;
  splits: { asset: string; bps: number }[];
}

export interface PayoutPreference {
  operatorId: string;
  asset: string;
  assetId: string;
  version: number;
  splits: PayoutSplit[];
  setBy: string;
  setAt: Date;
}

const toPreference = (r: PreferenceRow): PayoutPreference => ({
  operatorId: r.operator_id,
  asset: r.asset,
  assetId: r.asset_id,
  version: r.version,
  splits: r.splits,
  setBy: r.set_by,
  setAt: new Date(r.set_at),
});

function invalid(path: string, message: string): LedgerError {
  return new LedgerError("invalid_request", message, [{ path, message }]);
}

async function requireAsset(db: Queryable, code: string, path: string): Promise<Asset> {
  const asset = await getAssetByCode(db, code);
  if (!asset) throw new LedgerError("asset_not_found", `asset ${code} does not exist`, [{ path, message: "does not exist" }]);
  return asset;
}

/**
 * Checks that the operator can be paid in a split's asset: the asset settles where this service
 * pays, the operator has a verified address on its chain, and a rate into it from the earnings
 * asset has a source (a configured feed, or a manual rate finance entered).
 */
async function checkSplit(db: Queryable, settlements: Settlements, operatorId: string, earnings: Asset, asset: Asset, path: string): Promise<void> {
  refuseRetiredAsset(asset);
  const route = settlements.forAsset(asset);
  if (route.kind === "unconfigured") {
    throw new LedgerError("chain_not_configured", route.reason ?? `asset ${asset.code} settles on chain ${route.chainId}, which this service does not pay on`, [
      { path, message: "is not paid out by this service" },
    ]);
  }
  if (route.kind === "evm" && (await getPayoutAddress(db, operatorId, route.chain.chainId)) === undefined) {
    throw new LedgerError(
      "payout_address_missing",
      `operator ${operatorId} has no verified payout address on chain ${route.chain.chainId}, where ${asset.code} settles`,
      [{ path, message: "has no verified payout address on its chain" }],
    );
  }
  if (asset.id === earnings.id) return;
  if (!feedFor(settlements, earnings.code, asset.code) && !(await latestRate(db, earnings.id, asset.id, "manual", new Date(Date.UTC(9999, 11, 31))))) {
    throw new LedgerError(
      "no_rate_source",
      `nothing gives a rate between ${earnings.code} and ${asset.code}: no price feed is configured for the pair and finance entered no rate (POST /v1/rates)`,
      [{ path, message: "has no rate source" }],
    );
  }
}

/** At a payout request: each split's asset is still paid out here, to an address the operator verified. */
export async function checkSplitsPayable(db: Queryable, settlements: Settlements, operatorId: string, splits: PayoutSplit[]): Promise<void> {
  for (const [i, s] of splits.entries()) {
    const asset = (await getAsset(db, s.asset_id))!;
    await checkSplit(db, settlements, operatorId, asset, asset, `splits.${i}.asset`);
  }
}

/** Sets an operator's payout preference (a new version). */
export async function setPayoutPreference(
  db: Queryable,
  settlements: Settlements,
  { now, by, requestId, ...input }: PreferenceInput & { now: Date; by: string; requestId: string | null },
): Promise<PayoutPreference> {
  const total = input.splits.reduce((s, x) => s + x.bps, 0);
  if (total !== 10_000) throw invalid("splits", `the splits' bps must add up to 10000, not ${total}`);
  const codes = input.splits.map((s) => s.asset);
  if (new Set(codes).size !== codes.length) throw invalid("splits", "each asset may appear once");
  return inTransaction(db, async (tx) => {
    if (!(await getOperator(tx, input.operatorId))) throw new LedgerError("operator_not_found", `operator ${input.operatorId} does not exist`);
    const earnings = await requireAsset(tx, input.asset, "asset");
    const splits: PayoutSplit[] = [];
    for (const [i, s] of input.splits.entries()) {
      const asset = await requireAsset(tx, s.asset, `splits.${i}.asset`);
      await checkSplit(tx, settlements, input.operatorId, earnings, asset, `splits.${i}.asset`);
      splits.push({ asset_id: asset.id, asset: asset.code, bps: s.bps });
    }
    await insertPreference(tx, { operatorId: input.operatorId, assetId: earnings.id, splits, setBy: by, setAt: now, requestId });
    return (await currentPreference(tx, input.operatorId, earnings.id))!;
  });
}

/** The preference in force, or undefined (paid in the earnings asset itself). */
export async function currentPreference(db: Queryable, operatorId: string, assetId: string): Promise<PayoutPreference | undefined> {
  const [row] = await preferenceVersions(db, operatorId, assetId);
  return row && toPreference(row);
}

export async function preferenceHistory(db: Queryable, operatorId: string, assetId: string): Promise<PayoutPreference[]> {
  return (await preferenceVersions(db, operatorId, assetId)).map(toPreference);
}

/** Whether a preference converts anything: one split of the earnings asset itself does not. */
export function converts(p: PayoutPreference | undefined): p is PayoutPreference {
  return p !== undefined && !(p.splits.length === 1 && p.splits[0]!.asset_id === p.assetId);
}
