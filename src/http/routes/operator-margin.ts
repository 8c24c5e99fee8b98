import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { unitHours } from "../../domain/capacity.js";
import { rationalHours } from "../../domain/operator-costs.js";
import { operatorMargin, type MarginRow } from "../../services/operator-margin.js";
import { requireRole } from "../auth.js";
import { display } from "../display.js";
import { namedPeriodQuery, reportWindow } from "../period.js";
import type { AppEnv } from "../request-context.js";
import { errorResponses, json, security } from "./common.js";
import { visibleOperator } from "./operator-access.js";
import { OperatorId } from "./party-schemas.js";

const Amount = z.string().openapi({ description: "display units of the asset" });
const MarginLine = z
  .object({
    month: z.string(),
    resource: z.string(),
    asset: z.string(),
    available_unit_hours: z.string(),
    paid_unit_hours: z.string(),
    revenue: Amount.openapi({ description: "the earnings report's net in the asset, for the month's part of the period" }),
    energy: Amount,
    bandwidth: Amount,
    other: Amount,
    depreciation: Amount,
    costs: Amount,
    margin: Amount,
    margin_units: z.string().openapi({ description: "margin in the asset's smallest units" }),
  })
  .openapi("MarginLine");

const route = createRoute({
  method: "get",
  path: "/v1/operators/{id}/margin",
  operationId: "getOperatorMargin",
  tags: ["operators"],
  summary: "Per machine class with costs and month: net revenue from the ledger, costs, margin (the operator itself, admin, finance)",
  security,
  middleware: [requireRole("admin", "finance", "operator", "marketplace")] as const,
  request: { params: z.object({ id: OperatorId }), query: z.strictObject(namedPeriodQuery()) },
  responses: {
    200: json(z.object({ operator_id: z.string(), from: z.string(), to: z.string(), data: z.array(MarginLine) }), "by resource, then month"),
    ...errorResponses,
  },
});

const marginOut = (r: MarginRow): z.infer<typeof MarginLine> => {
  const s = r.asset.scale;
  const margin = r.net - r.costs.total;
  return {
    month: r.month,
    resource: r.resource,
    asset: r.asset.code,
    available_unit_hours: unitHours(r.availableUnitMs),
    paid_unit_hours: rationalHours(r.paid),
    revenue: display(r.net, s),
    energy: display(r.costs.energy, s),
    bandwidth: display(r.costs.bandwidth, s),
    other: display(r.costs.other, s),
    depreciation: display(r.costs.depreciation, s),
    costs: display(r.costs.total, s),
    margin: display(margin, s),
    margin_units: margin.toString(),
  };
};

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const { from, to } = reportWindow(c.req.valid("query"), "UTC", { maxDays: 366, name: "a margin report" });
    await visibleOperator(c, id);
    const db = c.get("deps").ledger.db;
    const rows = await operatorMargin(db, id, from, to, db.clock.now());
    return c.json({ operator_id: id, from: from.toISOString(), to: to.toISOString(), data: rows.map(marginOut) }, 200);
  });
}
