import type { Queryable } from "../client.js";

export interface OperatorCostsRow {
  operator_id: string;
  resource: string;
  asset_id: string;
  asset_code: string;
  scale: number;
  power_watts: string;
  price_per_kwh: string;
  bandwidth_monthly: string;
  other_monthly: string;
  purchase_price: string;
  depreciation_months: number;
  updated_by: string;
  updated_at: Date | string;
}

const SELECT = `select c.operator_id, c.resource, c.asset_id, s.code as asset_code, s.scale, c.power_watts::text as power_watts,
                       c.price_per_kwh::text as price_per_kwh, c.bandwidth_monthly::text as bandwidth_monthly,
                       c.other_monthly::text as other_monthly, c.purchase_price::text as purchase_price, c.depreciation_months,
                       c.updated_by, c.updated_at
                  from operator_costs c join assets s on s.id = c.asset_id`;

/** Writes (replaces) the operator's costs of one resource: the last write wins, stamped with who and when. */
export async function upsertOperatorCosts(
  tx: Queryable,
  v: {
    operatorId: string;
    resource: string;
    assetId: string;
    powerWatts: string;
    pricePerKwh: string;
    bandwidthMonthly: string;
    otherMonthly: string;
    purchasePrice: string;
    depreciationMonths: number;
    by: string;
    at: Date;
  },
): Promise<void> {
  await tx.query(
    `insert into operator_costs (operator_id, resource, asset_id, power_watts, price_per_kwh, bandwidth_monthly, other_monthly,
                                 purchase_price, depreciation_months, updated_by, updated_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       on conflict (operator_id, resource) do update set asset_id = excluded.asset_id, power_watts = excluded.power_watts,
         price_per_kwh = excluded.price_per_kwh, bandwidth_monthly = excluded.bandwidth_monthly, other_monthly = excluded.other_monthly,
         purchase_price = excluded.purchase_price, depreciation_months = excluded.depreciation_months,
         updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
    [
      v.operatorId,
      v.resource,
      v.assetId,
      v.powerWatts,
      v.pricePerKwh,
      v.bandwidthMonthly,
      v.otherMonthly,
      v.purchasePrice,
      v.depreciationMonths,
      v.by,
      v.at.toISOString(),
    ],
  );
}

/** The operator's costs, of one resource when given, by resource. */
export async function listOperatorCostsRows(db: Queryable, operatorId: string, resource?: string): Promise<OperatorCostsRow[]> {
  return db.query<OperatorCostsRow>(`${SELECT} where c.operator_id = $1 and ($2::text is null or c.resource = $2) order by c.resource`, [
    operatorId,
    resource ?? null,
  ]);
}
