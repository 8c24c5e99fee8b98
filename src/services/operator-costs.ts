import { getAssetByCode } from "../db/queries/assets.js";
import { listOperatorCostsRows, upsertOperatorCosts, type OperatorCostsRow } from "../db/queries/operator-costs.js";
import { LedgerError } from "../domain/errors.js";
import type { UnitCosts } from "../domain/operator-costs.js";
import { parseDecimal } from "../domain/rating.js";
import type { Queryable } from "./context.js";
import { getOperator } from "./marketplaces.js";
import { inTransaction } from "./transaction.js";

/** An operator's costs of one machine class, per unit, in display units of `assetCode` (docs/usage.md, "Costs, margin and what-if"). */
export interface OperatorCosts {
  operatorId: string;
  resource: string;
  assetId: string;
  assetCode: string;
  scale: number;
  powerWatts: string;
  pricePerKwh: string;
  bandwidthMonthly: string;
  otherMonthly: string;
  purchasePrice: string;
  depreciationMonths: number;
  updatedBy: string;
  updatedAt: Date;
}

export interface CostsInput {
  operatorId: string;
  resource: string;
  asset: string;
  powerWatts: string;
  pricePerKwh: string;
  bandwidthMonthly: string;
  otherMonthly: string;
  purchasePrice: string;
  depreciationMonths: number;
  by: string;
  now: Date;
}

/** A numeric as stored ("1.50") in its plain form ("1.5"). */
const plain = (text: string) => (text.includes(".") ? text.replace(/0+$/, "").replace(/\.$/, "") : text);

const costsOut = (r: OperatorCostsRow): OperatorCosts => ({
  operatorId: r.operator_id,
  resource: r.resource,
  assetId: r.asset_id,
  assetCode: r.asset_code,
  scale: r.scale,
  powerWatts: plain(r.power_watts),
  pricePerKwh: plain(r.price_per_kwh),
  bandwidthMonthly: plain(r.bandwidth_monthly),
  otherMonthly: plain(r.other_monthly),
  purchasePrice: plain(r.purchase_price),
  depreciationMonths: r.depreciation_months,
  updatedBy: r.updated_by,
  updatedAt: new Date(r.updated_at),
});

/** The figures of costs for the arithmetic (the amounts were checked as decimals on the way in). */
export function unitCostsOf(
  c: Pick<OperatorCosts, "powerWatts" | "pricePerKwh" | "bandwidthMonthly" | "otherMonthly" | "purchasePrice" | "depreciationMonths">,
): UnitCosts {
  const d = (text: string) => parseDecimal(text) ?? { digits: 0n, exp: 0 };
  return {
    powerWatts: d(c.powerWatts),
    pricePerKwh: d(c.pricePerKwh),
    bandwidthMonthly: d(c.bandwidthMonthly),
    otherMonthly: d(c.otherMonthly),
    purchasePrice: d(c.purchasePrice),
    depreciationMonths: c.depreciationMonths,
  };
}

/** The asset costs may be in: one that exists and is not retired (asset_not_found naming `asset` otherwise). */
export async function assetForCosts(db: Queryable, code: string): Promise<{ id: string; code: string; scale: number }> {
  const asset = await getAssetByCode(db, code);
  if (!asset || asset.retiredAt)
    throw new LedgerError("asset_not_found", `asset ${code} does not exist or is retired`, [{ path: "asset", message: "no such asset in use" }]);
  return asset;
}

/** Sets (replaces) the operator's costs of a resource: the last write wins; `updated_at`/`updated_by` say which. */
export async function putOperatorCosts(db: Queryable, input: CostsInput): Promise<OperatorCosts> {
  return inTransaction(db, async (tx) => {
    if (!(await getOperator(tx, input.operatorId))) throw new LedgerError("operator_not_found", `operator ${input.operatorId} does not exist`);
    const asset = await assetForCosts(tx, input.asset);
    await upsertOperatorCosts(tx, { ...input, assetId: asset.id, at: input.now });
    return (await getOperatorCosts(tx, input.operatorId, input.resource))!;
  });
}

/** The operator's costs of one resource, or undefined. */
export async function getOperatorCosts(db: Queryable, operatorId: string, resource: string): Promise<OperatorCosts | undefined> {
  const [row] = await listOperatorCostsRows(db, operatorId, resource);
  return row ? costsOut(row) : undefined;
}

/** Every resource's costs of the operator, by resource. */
export async function listOperatorCosts(db: Queryable, operatorId: string): Promise<OperatorCosts[]> {
  return (await listOperatorCostsRows(db, operatorId)).map(costsOut);
}
