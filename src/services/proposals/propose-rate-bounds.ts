import type { Queryable } from "../../db/client.js";
import { lockAssetByCode, updateAssetRateBounds } from "../../db/queries/assets.js";
import { LedgerError } from "../../domain/errors.js";
import { mayPropose, openOrInsert, requireAsset, type Proposal, type Proposing } from "./proposal.js";

export interface RateBoundsChange {
  asset: string;
  /** How old a rate into or out of the asset may be for a conversion to use it (1 s .. 1 year). */
  maxAgeSeconds: number;
  /** How far apart two fresh sources of its rate may be (0 .. 10,000 bps). */
  maxDeviationBps: number;
}

export function checkRateBounds(b: { maxAgeSeconds: number; maxDeviationBps: number }): void {
  if (!Number.isInteger(b.maxAgeSeconds) || b.maxAgeSeconds < 1 || b.maxAgeSeconds > 31_536_000) {
    const message = "must be a whole number of seconds from 1 to 31536000 (a year)";
    throw new LedgerError("invalid_request", `rate_max_age_seconds ${message}`, [{ path: "rate_max_age_seconds", message }]);
  }
  if (!Number.isInteger(b.maxDeviationBps) || b.maxDeviationBps < 0 || b.maxDeviationBps > 10_000) {
    const message = "must be a whole number of basis points from 0 to 10000";
    throw new LedgerError("invalid_request", `rate_max_deviation_bps ${message}`, [{ path: "rate_max_deviation_bps", message }]);
  }
}

/**
 * Proposes an asset's rate bounds (docs/settlement.md, "Rates"): they decide which rates money is
 * converted at, so they change on two keys' word, like the asset's settlement.
 */
export async function proposeRateBounds(db: Queryable, { now, by, ...input }: Proposing<RateBoundsChange>): Promise<Proposal> {
  mayPropose(by, "rate_bounds");
  checkRateBounds(input);
  const asset = await requireAsset(db, input.asset);
  const payload = {
    asset: asset.code,
    asset_id: asset.id,
    from: { rate_max_age_seconds: asset.rateBounds.maxAgeSeconds, rate_max_deviation_bps: asset.rateBounds.maxDeviationBps },
    to: { rate_max_age_seconds: input.maxAgeSeconds, rate_max_deviation_bps: input.maxDeviationBps },
  };
  return openOrInsert(db, now, by, "rate_bounds", null, payload);
}

/** Approving it: the bounds are in force from now (the asset's row locked). */
export async function applyRateBounds(tx: Queryable, p: Proposal): Promise<Record<string, unknown>> {
  const asset = await lockAssetByCode(tx, String(p.payload.asset));
  if (!asset) throw new LedgerError("asset_not_found", `asset ${String(p.payload.asset)} does not exist`);
  const to = p.payload.to as { rate_max_age_seconds: number; rate_max_deviation_bps: number };
  await updateAssetRateBounds(tx, asset.id, to.rate_max_age_seconds, to.rate_max_deviation_bps);
  return { asset: asset.code, ...to };
}
