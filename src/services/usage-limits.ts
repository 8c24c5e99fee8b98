import type { Database, Queryable } from "../db/client.js";
import { getAssetByCode } from "../db/queries/assets.js";
import { getUsageLimitRow, type UsageLimitRow } from "../db/queries/usage.js";
import { ensureUsageLimitRow, updateUsageLimits } from "../db/queries/usage-limits.js";
import { LedgerError } from "../domain/errors.js";
import { defaultLimits, defaultRate, formatDecimal, formatRate, parseRate, type UsageLimits } from "../domain/usage-limits.js";
import type { Decimal } from "../domain/rating.js";
import { getMarketplace } from "./marketplaces.js";
import { inTransaction } from "./transaction.js";

export interface UsageLimitsView {
  marketplaceId: string;
  asset: string;
  /** The asset's scale (decimals). */
  scale: number;
  maxGrossPerRecord: bigint;
  /** Units with a rate set by an admin. */
  maxQuantityPerSecond: Record<string, string>;
  /** What applies where nothing is set (time units: 100,000 of the resource at once, e.g. 100000/3600 gpu_hour a second). */
  defaults: { maxGrossPerRecord: bigint; maxQuantityPerSecond: Record<string, string> };
  updatedBy: string | null;
  updatedAt: Date | null;
}

/** The limits of a stored row (or none) for an asset of this scale. */
export function limitsOf(row: Pick<UsageLimitRow, "max_gross_per_record" | "max_quantity_per_second"> | undefined, scale: number): UsageLimits {
  const limits = defaultLimits(scale);
  if (!row) return limits;
  if (row.max_gross_per_record !== null) limits.maxGrossPerRecord = BigInt(row.max_gross_per_record);
  for (const [unit, rate] of Object.entries(row.max_quantity_per_second)) limits.maxQuantityPerSecond.set(unit, parseRate(rate)!);
  return limits;
}

const DEFAULT_UNITS = ["gpu_second", "gpu_minute", "gpu_hour"];

export async function getUsageLimits(db: Queryable, marketplaceId: string, assetCode: string): Promise<UsageLimitsView> {
  if (!(await getMarketplace(db, marketplaceId))) throw new LedgerError("marketplace_not_found", `marketplace ${marketplaceId} does not exist`);
  const asset = await getAssetByCode(db, assetCode);
  if (!asset) throw new LedgerError("asset_not_found", `asset ${assetCode} does not exist`);
  const row = await getUsageLimitRow(db, marketplaceId, asset.id);
  const limits = limitsOf(row, asset.scale);
  const defaults = defaultLimits(asset.scale);
  return {
    marketplaceId,
    asset: asset.code,
    scale: asset.scale,
    maxGrossPerRecord: limits.maxGrossPerRecord,
    maxQuantityPerSecond: Object.fromEntries([...limits.maxQuantityPerSecond].map(([u, r]) => [u, formatDecimal(r)])),
    defaults: {
      maxGrossPerRecord: defaults.maxGrossPerRecord,
      maxQuantityPerSecond: { ...Object.fromEntries(DEFAULT_UNITS.map((u) => [u, formatRate(defaultRate(u)!)])) },
    },
    updatedBy: row?.updated_by ?? null,
    updatedAt: row ? new Date(row.updated_at) : null,
  };
}

/**
 * Sets a marketplace's limits for an asset (admin). Given fields replace the stored ones; a rate of
 * null removes that unit's rate (back to its default).
 */
export async function setUsageLimits(
  db: Database | Queryable,
  now: Date,
  input: { marketplaceId: string; asset: string; maxGrossPerRecord?: bigint | null; maxQuantityPerSecond?: Record<string, string | null>; updatedBy: string },
): Promise<UsageLimitsView> {
  if (!(await getMarketplace(db, input.marketplaceId))) throw new LedgerError("marketplace_not_found", `marketplace ${input.marketplaceId} does not exist`);
  const asset = await getAssetByCode(db, input.asset);
  if (!asset) throw new LedgerError("asset_not_found", `asset ${input.asset} does not exist`, [{ path: "asset", message: "does not exist" }]);
  return inTransaction(db, async (tx) => {
    // The row is locked while it is merged, so that concurrent changes of different units both hold.
    await ensureUsageLimitRow(tx, input.marketplaceId, asset.id, input.updatedBy, now);
    const current = await getUsageLimitRow(tx, input.marketplaceId, asset.id, true);
    const rates: Record<string, string> = { ...(current?.max_quantity_per_second ?? {}) };
    for (const [unit, rate] of Object.entries(input.maxQuantityPerSecond ?? {})) {
      if (rate === null) delete rates[unit];
      else {
        const d: Decimal | undefined = parseRate(rate);
        if (!d)
          throw new LedgerError("invalid_request", `the rate for ${unit} must be a positive decimal`, [
            { path: `maxQuantityPerSecond.${unit}`, message: "must be a positive decimal" },
          ]);
        rates[unit] = formatDecimal(d);
      }
    }
    const gross = input.maxGrossPerRecord === undefined ? (current?.max_gross_per_record ?? null) : (input.maxGrossPerRecord?.toString() ?? null);
    await updateUsageLimits(tx, {
      marketplaceId: input.marketplaceId,
      assetId: asset.id,
      maxGrossPerRecord: gross,
      maxQuantityPerSecond: rates,
      updatedBy: input.updatedBy,
      updatedAt: now,
    });
    return getUsageLimits(tx, input.marketplaceId, asset.code);
  });
}
