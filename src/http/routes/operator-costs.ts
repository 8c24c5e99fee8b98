import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { MAX_UNITS, Resource } from "../../services/capacity.js";
import { getOperatorCosts, listOperatorCosts, putOperatorCosts, type OperatorCosts } from "../../services/operator-costs.js";
import { requireRole } from "../auth.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { numberAsString } from "../money-schemas.js";
import { ApiError } from "../problem.js";
import type { AppEnv } from "../request-context.js";
import { errorResponses, json, jsonBody, security } from "./common.js";
import { visibleOperator } from "./operator-access.js";
import { OperatorId } from "./party-schemas.js";

/** A non-negative amount in display units: at most 12 digits before the point and 9 after. */
export const CostAmount = z
  .string(numberAsString("0.12"))
  .max(22)
  .regex(/^(0|[1-9][0-9]{0,11})(\.[0-9]{1,9})?$/, "must be a decimal string ≥ 0, at most 12 digits before the point and 9 after");
/** Watts at the wall per unit: at most 1,000,000 W, 3 decimals. */
export const PowerWatts = z
  .string(numberAsString("700"))
  .max(11)
  .regex(/^(0|[1-9][0-9]{0,5}|1000000)(\.[0-9]{1,3})?$/, "must be a decimal string of watts, 0 to 1000000, at most 3 decimals");
export const DepreciationMonths = z.number().int().min(1).max(600);
export { MAX_UNITS, Resource };

export const ResourceParam = Resource.openapi({ param: { name: "resource", in: "path" }, example: "gpu:h100" });

const CostsBody = z
  .strictObject({
    asset: z.string().min(1).max(32).openapi({ description: "the asset (code) the amounts are in: compared with the net earned in it", example: "USDC" }),
    power_watts: PowerWatts.openapi({ description: "draw of one unit at the wall, in watts", example: "700" }),
    price_per_kwh: CostAmount.openapi({ example: "0.12" }),
    bandwidth_monthly: CostAmount.openapi({ description: "per unit and month", example: "20" }),
    other_monthly: CostAmount.openapi({ description: "rent, cooling, staff… per unit and month", example: "30" }),
    purchase_price: CostAmount.openapi({ description: "of one unit", example: "30000" }),
    depreciation_months: DepreciationMonths.openapi({ example: 36 }),
  })
  .openapi("OperatorCostsPut");

export const Costs = z
  .object({
    operator_id: z.string(),
    resource: z.string(),
    asset: z.string(),
    asset_id: z.string(),
    power_watts: z.string(),
    price_per_kwh: z.string(),
    bandwidth_monthly: z.string(),
    other_monthly: z.string(),
    purchase_price: z.string(),
    depreciation_months: z.number().int(),
    updated_by: z.string().openapi({ description: "the id of the key that wrote them last" }),
    updated_at: z.string().openapi({ description: "when they were written last (the last write wins; no history is kept)" }),
  })
  .openapi("OperatorCosts");

export const costsOut = (c: OperatorCosts): z.infer<typeof Costs> => ({
  operator_id: c.operatorId,
  resource: c.resource,
  asset: c.assetCode,
  asset_id: c.assetId,
  power_watts: c.powerWatts,
  price_per_kwh: c.pricePerKwh,
  bandwidth_monthly: c.bandwidthMonthly,
  other_monthly: c.otherMonthly,
  purchase_price: c.purchasePrice,
  depreciation_months: c.depreciationMonths,
  updated_by: c.updatedBy,
  updated_at: c.updatedAt.toISOString(),
});

const PRIVATE =
  "An operator's costs are its own: the operator's key and admins read and write them, finance reads them; a marketplace key or another operator's gets 404 as if the operator did not exist.";

const put = createRoute({
  method: "put",
  path: "/v1/operators/{id}/costs/{resource}",
  operationId: "putOperatorCosts",
  tags: ["operators"],
  summary: "Set an operator's costs of a machine class, per unit (the operator itself, admin)",
  description: `${PRIVATE} The last write wins (updated_at, updated_by). Idempotency-Key optional.`,
  security,
  middleware: [requireRole("admin", "operator", "marketplace"), jsonBodyGuard] as const,
  request: { params: z.object({ id: OperatorId, resource: ResourceParam }), body: jsonBody(CostsBody) },
  responses: { 200: json(Costs, "the costs as stored"), ...errorResponses },
});

const getOne = createRoute({
  method: "get",
  path: "/v1/operators/{id}/costs/{resource}",
  operationId: "getOperatorCosts",
  tags: ["operators"],
  summary: "An operator's costs of a machine class (the operator itself, admin, finance)",
  description: PRIVATE,
  security,
  middleware: [requireRole("admin", "finance", "operator", "marketplace")] as const,
  request: { params: z.object({ id: OperatorId, resource: ResourceParam }) },
  responses: { 200: json(Costs, "the costs"), ...errorResponses },
});

const list = createRoute({
  method: "get",
  path: "/v1/operators/{id}/costs",
  operationId: "listOperatorCosts",
  tags: ["operators"],
  summary: "An operator's costs of every machine class (the operator itself, admin, finance)",
  description: PRIVATE,
  security,
  middleware: [requireRole("admin", "finance", "operator", "marketplace")] as const,
  request: { params: z.object({ id: OperatorId }), query: z.strictObject({}) },
  responses: { 200: json(z.object({ data: z.array(Costs) }), "by resource"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(put, async (c) => {
    const { id, resource } = c.req.valid("param");
    const body = c.req.valid("json");
    await visibleOperator(c, id);
    const db = c.get("deps").ledger.db;
    return idempotently(c, body, async (tx) => ({
      status: 200,
      body: costsOut(
        await putOperatorCosts(tx, {
          operatorId: id,
          resource,
          asset: body.asset,
          powerWatts: body.power_watts,
          pricePerKwh: body.price_per_kwh,
          bandwidthMonthly: body.bandwidth_monthly,
          otherMonthly: body.other_monthly,
          purchasePrice: body.purchase_price,
          depreciationMonths: body.depreciation_months,
          by: c.get("principal").keyId,
          now: db.clock.now(),
        }),
      ),
    })) as never;
  });
  app.openapi(getOne, async (c) => {
    const { id, resource } = c.req.valid("param");
    await visibleOperator(c, id);
    const costs = await getOperatorCosts(c.get("deps").ledger.db, id, resource);
    if (!costs) throw new ApiError("operator_costs_not_found", `operator ${id} has set no costs of ${resource}`);
    return c.json(costsOut(costs), 200);
  });
  app.openapi(list, async (c) => {
    const { id } = c.req.valid("param");
    await visibleOperator(c, id);
    return c.json({ data: (await listOperatorCosts(c.get("deps").ledger.db, id)).map(costsOut) }, 200);
  });
}
