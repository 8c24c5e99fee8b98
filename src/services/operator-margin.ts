import { MS_PER_HOUR, unitsAt } from "../domain/capacity.js";
import { availableUnitMs, groupWindow, paidUnitMs, type Rational } from "../domain/economics.js";
import { addRationals, costsOf, HOURS_PER_MONTH, type CostBreakdown } from "../domain/operator-costs.js";
import { capacityByResource } from "./capacity.js";
import type { Queryable } from "./context.js";
import { listOperatorCosts, unitCostsOf } from "./operator-costs.js";
import { operatorEarnings } from "./reads.js";

/**
 * Operator economics from the ledger and the operator's own figures (docs/usage.md, "Costs, margin
 * and what-if"): the fleet over the last 30 days, the margin per machine class and month, and the
 * inputs of a what-if. Revenue is always the earnings report's net (usage effective in the window,
 * less reversals effective in it), per asset, never converted.
 */
type EarningsRow = Awaited<ReturnType<typeof operatorEarnings>>[number];

export interface Takings {
  net: bigint;
  paid: Rational;
}

/** Net and paid unit-time of earnings rows (time units only count as paid time). */
export function takingsOf(rows: EarningsRow[]): Takings {
  return {
    net: rows.reduce((s, r) => s + BigInt(r.net), 0n),
    paid: addRationals(rows.map((r) => paidUnitMs(r.quantity, r.unit) ?? { num: 0n, den: 1n })),
  };
}

export interface FleetRow extends Takings {
  resource: string;
  asset: { id: string; code: string; scale: number } | null;
  declaredUnits: number | null;
  availableUnitMs: bigint | null;
}

export const FLEET_DAYS = 30;
const DAY_MS = 86_400_000;

/** Per resource and asset, the last 30 days to now: declared units now, available and paid unit-time, net. */
export async function operatorFleet(db: Queryable, operatorId: string, now: Date): Promise<{ from: Date; to: Date; rows: FleetRow[] }> {
  const from = new Date(now.getTime() - FLEET_DAYS * DAY_MS);
  const [capacity, earnings] = await Promise.all([capacityByResource(db, operatorId), operatorEarnings(db, operatorId, from, now, "resource", true)]);
  const window = { from: from.getTime(), to: now.getTime() };
  const resources = [...new Set([...capacity.keys(), ...earnings.map((r) => r.resource!)])].sort();
  const rows = resources.flatMap((resource): FleetRow[] => {
    const versions = capacity.get(resource);
    const base = {
      resource,
      declaredUnits: versions ? unitsAt(versions, now.getTime()) : null,
      availableUnitMs: availableUnitMs(versions, window),
    };
    const mine = earnings.filter((r) => r.resource === resource);
    const assets = [...new Map(mine.map((r) => [r.asset_id, { id: r.asset_id, code: r.asset_code, scale: r.scale }])).values()];
    if (assets.length === 0) return [{ ...base, asset: null, net: 0n, paid: { num: 0n, den: 1n } }];
    return assets.map((asset) => ({ ...base, asset, ...takingsOf(mine.filter((r) => r.asset_id === asset.id)) }));
  });
  return { from, to: now, rows };
}

export interface MarginRow extends Takings {
  month: string;
  resource: string;
  asset: { id: string; code: string; scale: number };
  availableUnitMs: bigint;
  costs: CostBreakdown;
}

/** The UTC months [from, to) touches, as YYYY-MM, with their full length in ms. */
export function monthsIn(from: Date, to: Date): { key: string; ms: bigint }[] {
  const out: { key: string; ms: bigint }[] = [];
  for (let y = from.getUTCFullYear(), m = from.getUTCMonth(); Date.UTC(y, m, 1) < to.getTime(); m++) {
    const start = Date.UTC(y, m, 1);
    out.push({ key: new Date(start).toISOString().slice(0, 7), ms: BigInt(Date.UTC(y, m + 1, 1) - start) });
  }
  return out;
}

/**
 * Per resource with costs and month of [from, to): the net in the costs' asset, and the costs of the
 * capacity available in the month's part of [from, to) up to now.
 */
export async function operatorMargin(db: Queryable, operatorId: string, from: Date, to: Date, now: Date): Promise<MarginRow[]> {
  const [costs, capacity, earnings] = await Promise.all([
    listOperatorCosts(db, operatorId),
    capacityByResource(db, operatorId),
    operatorEarnings(db, operatorId, from, to, "month", true),
  ]);
  return costs.flatMap((c) =>
    monthsIn(from, to).map((month): MarginRow => {
      const window = groupWindow("month", month.key, from, to, now);
      const available = availableUnitMs(capacity.get(c.resource), window) ?? 0n;
      const rows = earnings.filter((r) => r.group_key === month.key && r.resource === c.resource && r.asset_id === c.assetId);
      return {
        month: month.key,
        resource: c.resource,
        asset: { id: c.assetId, code: c.assetCode, scale: c.scale },
        availableUnitMs: available,
        costs: costsOf(unitCostsOf(c), available, month.ms, c.scale),
        ...takingsOf(rows),
      };
    }),
  );
}

/** A what-if's month: 730 hours of each unit. */
export const scenarioUnitMs = (units: number) => BigInt(units) * HOURS_PER_MONTH * MS_PER_HOUR;

/** The history a what-if extrapolates: the last `weeks` weeks to now of a resource, in one asset. */
export async function scenarioHistory(
  db: Queryable,
  s: { operatorId: string; resource: string; assetId: string; weeks: number; now: Date },
): Promise<Takings & { from: Date; to: Date; availableUnitMs: bigint | null }> {
  const from = new Date(s.now.getTime() - s.weeks * 7 * DAY_MS);
  const [capacity, earnings] = await Promise.all([capacityByResource(db, s.operatorId), operatorEarnings(db, s.operatorId, from, s.now, "resource", true)]);
  const rows = earnings.filter((r) => r.resource === s.resource && r.asset_id === s.assetId);
  return { from, to: s.now, availableUnitMs: availableUnitMs(capacity.get(s.resource), { from: from.getTime(), to: s.now.getTime() }), ...takingsOf(rows) };
}
