import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { unitHours } from "../../domain/capacity.js";
import { netPerAvailableUnitHour, utilisation } from "../../domain/economics.js";
import { netPerPaidUnitHour, rationalHours } from "../../domain/operator-costs.js";
import { operatorFleet, type FleetRow } from "../../services/operator-margin.js";
import { requireRole } from "../auth.js";
import { displayOrNull } from "../display.js";
import type { AppEnv } from "../request-context.js";
import { errorResponses, json, security } from "./common.js";
import { visibleOperator } from "./operator-access.js";
import { OperatorId } from "./party-schemas.js";

const FleetClass = z
  .object({
    resource: z.string(),
    asset: z.string().nullable().openapi({ description: "the asset of the net (a row per asset earned in); null when nothing was earned" }),
    declared_units: z.number().int().nullable().openapi({ description: "units declared now; null when the resource has no capacity declared" }),
    available_unit_hours: z.string().nullable(),
    paid_unit_hours: z.string(),
    utilisation: z.string().nullable(),
    net: z.string(),
    net_per_paid_unit_hour: z.string().nullable().openapi({ description: "the realised rate, display units, rounded down" }),
    net_per_available_unit_hour: z.string().nullable(),
  })
  .openapi("FleetClass");

const route = createRoute({
  method: "get",
  path: "/v1/operators/{id}/fleet",
  operationId: "getOperatorFleet",
  tags: ["operators"],
  summary: "Per machine class, the last 30 days: declared units, available and paid unit-hours, utilisation, realised rates",
  security,
  middleware: [requireRole("admin", "finance", "operator")] as const,
  request: { params: z.object({ id: OperatorId }), query: z.strictObject({}) },
  responses: {
    200: json(z.object({ operator_id: z.string(), from: z.string(), to: z.string(), data: z.array(FleetClass) }), "by resource, then asset"),
    ...errorResponses,
  },
});

const fleetOut = (r: FleetRow): z.infer<typeof FleetClass> => {
  const scale = r.asset?.scale ?? 0;
  const available = r.availableUnitMs;
  return {
    resource: r.resource,
    asset: r.asset?.code ?? null,
    declared_units: r.declaredUnits,
    available_unit_hours: available === null ? null : unitHours(available),
    paid_unit_hours: rationalHours(r.paid),
    utilisation: available === null ? null : utilisation(r.paid, available),
    net: displayOrNull(r.net, scale)!,
    net_per_paid_unit_hour: displayOrNull(netPerPaidUnitHour(r.net, r.paid), scale),
    net_per_available_unit_hour: available === null ? null : displayOrNull(netPerAvailableUnitHour(r.net, available), scale),
  };
};

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    await visibleOperator(c, id);
    const db = c.get("deps").ledger.db;
    const fleet = await operatorFleet(db, id, db.clock.now());
    return c.json({ operator_id: id, from: fleet.from.toISOString(), to: fleet.to.toISOString(), data: fleet.rows.map(fleetOut) }, 200);
  });
}
