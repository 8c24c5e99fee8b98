import type { Queryable } from "../../db/client.js";
import { LedgerError } from "../../domain/errors.js";
import { MAX_GROSS_PER_RECORD_CEILING, parseRate } from "../../domain/usage-limits.js";
import { mayPropose, openOrInsert, requireAsset, requireMarketplace, type Proposal, type Proposing } from "./proposal.js";

export interface UsageLimitsChange {
  marketplaceId: string;
  asset: string;
  maxGrossPerRecord?: bigint | null;
  maxQuantityPerSecond?: Record<string, string | null>;
}

/**
 * Proposes a change of a marketplace's usage limits in an asset. Checked now; applied when another
 * key approves it. Asking for the same change again while it is open answers the open proposal.
 */
export async function proposeUsageLimits(db: Queryable, { now, by, ...input }: Proposing<UsageLimitsChange>): Promise<Proposal> {
  mayPropose(by, "usage_limits");
  await requireMarketplace(db, input.marketplaceId);
  const asset = await requireAsset(db, input.asset);
  if (input.maxGrossPerRecord != null && input.maxGrossPerRecord > MAX_GROSS_PER_RECORD_CEILING) {
    const message = `max_gross_per_record may be at most ${MAX_GROSS_PER_RECORD_CEILING} (2^128 - 1) smallest units, so that no account's running total can overflow`;
    throw new LedgerError("invalid_request", message, [{ path: "maxGrossPerRecord", message }]);
  }
  for (const [unit, rate] of Object.entries(input.maxQuantityPerSecond ?? {})) {
    if (rate !== null && !parseRate(rate)) {
      throw new LedgerError("invalid_request", `the rate for ${unit} must be a positive decimal`, [
        { path: `maxQuantityPerSecond.${unit}`, message: "must be a positive decimal" },
      ]);
    }
  }
  const payload = {
    marketplace_id: input.marketplaceId,
    asset: asset.code,
    asset_id: asset.id,
    ...(input.maxGrossPerRecord === undefined ? {} : { max_gross_per_record: input.maxGrossPerRecord?.toString() ?? null }),
    ...(input.maxQuantityPerSecond === undefined ? {} : { max_quantity_per_second: input.maxQuantityPerSecond }),
  };
  return openOrInsert(db, now, by, "usage_limits", input.marketplaceId, payload);
}
