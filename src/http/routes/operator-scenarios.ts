import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { unitHours } from "../../domain/capacity.js";
import { utilisation } from "../../domain/economics.js";
import { costsOf, expectedMonthlyRevenue, netPerPaidUnitHour, paybackMonths, rationalHours } from "../../domain/operator-costs.js";
import { assetForCosts, getOperatorCosts, unitCostsOf } from "../../services/operator-costs.js";
import { scenarioHistory, scenarioUnitMs } from "../../services/operator-margin.js";
import { requireRole } from "../auth.js";
import { display, displayOrNull } from "../display.js";
import { idempotentRequest, storedResponse } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { ApiError } from "../problem.js";
import type { AppEnv } from "../request-context.js";
import { errorResponses, json, jsonBody, security } from "./common.js";
import { visibleOperator } from "./operator-access.js";
import { CostAmount, DepreciationMonths, MAX_UNITS, PowerWatts, Resource } from "./operator-costs.js";
import { OperatorId } from "./party-schemas.js";
import type { Queryable } from "../../services/context.js";

const Body = z
  .strictObject({
    resource: Resource.openapi({ description: "the machine class", example: "gpu:h100" }),
    units: z.number().int().min(1).max(MAX_UNITS).openapi({ example: 8 }),
    asset: z.string().min(1).max(32).optional().openapi({ description: "the asset of the costs and revenue; default: that of the stored costs" }),
    weeks: z.number().int().min(1).max(52).openapi({ description: "the history to extrapolate: the last N weeks to now", example: 4 }),
    power_watts: PowerWatts.optional().openapi({ example: "700" }),
    price_per_kwh: CostAmount.optional().openapi({ example: "0.12" }),
    bandwidth_monthly: CostAmount.optional().openapi({ example: "20" }),
    other_monthly: CostAmount.optional().openapi({ example: "30" }),
    purchase_price: CostAmount.optional().openapi({ example: "30000" }),
    depreciation_months: DepreciationMonths.optional(),
  })
  .openapi("ScenarioRequest");

const Nullable = z.string().nullable();
const ScenarioResult = z
  .object({
    operator_id: z.string(),
    inputs: z.object({
      resource: z.string(),
      units: z.number().int(),
      weeks: z.number().int(),
      asset: z.string(),
      power_watts: z.string(),
      price_per_kwh: z.string(),
      bandwidth_monthly: z.string(),
      other_monthly: z.string(),
      purchase_price: z.string(),
      depreciation_months: z.number().int(),
    }),
    history: z.object({
      from: z.string(),
      to: z.string(),
      available_unit_hours: Nullable,
      paid_unit_hours: z.string(),
      net: z.string(),
      utilisation: Nullable,
      net_per_paid_unit_hour: Nullable,
    }),
    monthly: z.object({
      hours: z.string(),
      revenue: Nullable.openapi({ description: "units × 730 h × net / available unit-hours of the history, rounded down" }),
      energy: z.string(),
      bandwidth: z.string(),
      other: z.string(),
      depreciation: z.string(),
      costs: z.string(),
      margin: Nullable,
      payback_months: Nullable.openapi({ description: "purchase price × units / margin, 2 decimals rounded up; null unless the margin is positive" }),
    }),
  })
  .openapi("ScenarioResult");

const COST_FIELDS = ["asset", "power_watts", "price_per_kwh", "bandwidth_monthly", "other_monthly", "purchase_price", "depreciation_months"] as const;

const route = createRoute({
  method: "post",
  path: "/v1/operators/{id}/scenarios",
  operationId: "runOperatorScenario",
  tags: ["operators"],
  summary: "What-if: the monthly revenue, costs, margin and payback of `units` units at the last N weeks' utilisation and realised rate",
  description:
    "Writes nothing: no Idempotency-Key is needed and none is remembered (one already used for another request is refused, 409 idempotency_key_reused) (the answer depends only on the body, the stored costs and the ledger). Costs not given come from the stored costs of the resource, and are in their asset.",
  security,
  middleware: [requireRole("admin", "finance", "operator", "marketplace"), jsonBodyGuard] as const,
  request: { params: z.object({ id: OperatorId }), body: jsonBody(Body) },
  responses: {
    200: json(ScenarioResult, "the inputs, the history used and the expected month"),
    ...errorResponses,
  },
});

/** The what-if's costs and asset: those of the body, the rest from the stored costs of the resource (all of them when none are stored). */
async function scenarioInputs(db: Queryable, id: string, body: z.infer<typeof Body>) {
  const stored = await getOperatorCosts(db, id, body.resource);
  const missing = COST_FIELDS.filter((f) => body[f] === undefined);
  if (!stored && missing.length > 0)
    throw new ApiError(
      "operator_costs_not_found",
      `operator ${id} has set no costs of ${body.resource}: set them or give ${missing.join(", ")}`,
      missing.map((path) => ({ path, message: "required: no costs of this resource are stored" })),
    );
  const inputs = {
    power_watts: body.power_watts ?? stored!.powerWatts,
    price_per_kwh: body.price_per_kwh ?? stored!.pricePerKwh,
    bandwidth_monthly: body.bandwidth_monthly ?? stored!.bandwidthMonthly,
    other_monthly: body.other_monthly ?? stored!.otherMonthly,
    purchase_price: body.purchase_price ?? stored!.purchasePrice,
    depreciation_months: body.depreciation_months ?? stored!.depreciationMonths,
  };
  const asset = body.asset !== undefined ? await assetForCosts(db, body.asset) : { id: stored!.assetId, code: stored!.assetCode, scale: stored!.scale };
  return { inputs, asset };
}

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    await visibleOperator(c, id);
    const db = c.get("deps").ledger.db;
    // Optional: a key that named another write is refused (409) as on every POST; nothing is ever stored under it.
    if (c.req.header("idempotency-key") !== undefined) await storedResponse(db, await idempotentRequest(c, body));
    const { inputs, asset } = await scenarioInputs(db, id, body);
    const h = await scenarioHistory(db, { operatorId: id, resource: body.resource, assetId: asset.id, weeks: body.weeks, now: db.clock.now() });
    const unit = unitCostsOf({
      powerWatts: inputs.power_watts,
      pricePerKwh: inputs.price_per_kwh,
      bandwidthMonthly: inputs.bandwidth_monthly,
      otherMonthly: inputs.other_monthly,
      purchasePrice: inputs.purchase_price,
      depreciationMonths: inputs.depreciation_months,
    });
    const costs = costsOf(unit, scenarioUnitMs(body.units), scenarioUnitMs(1), asset.scale);
    const revenue = h.availableUnitMs === null ? null : expectedMonthlyRevenue(body.units, h.net, h.availableUnitMs);
    const margin = revenue === null ? null : revenue - costs.total;
    const s = asset.scale;
    return c.json(
      {
        operator_id: id,
        inputs: { resource: body.resource, units: body.units, weeks: body.weeks, asset: asset.code, ...inputs },
        history: {
          from: h.from.toISOString(),
          to: h.to.toISOString(),
          available_unit_hours: h.availableUnitMs === null ? null : unitHours(h.availableUnitMs),
          paid_unit_hours: rationalHours(h.paid),
          net: display(h.net, s),
          utilisation: h.availableUnitMs === null ? null : utilisation(h.paid, h.availableUnitMs),
          net_per_paid_unit_hour: displayOrNull(netPerPaidUnitHour(h.net, h.paid), s),
        },
        monthly: {
          hours: "730",
          revenue: displayOrNull(revenue, s),
          energy: display(costs.energy, s),
          bandwidth: display(costs.bandwidth, s),
          other: display(costs.other, s),
          depreciation: display(costs.depreciation, s),
          costs: display(costs.total, s),
          margin: displayOrNull(margin, s),
          payback_months: margin === null ? null : paybackMonths(unit.purchasePrice, body.units, s, margin),
        },
      },
      200,
    );
  });
}
