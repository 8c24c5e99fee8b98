import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { declareCapacity, listCapacity, MAX_UNITS, Resource, type CapacityDeclaration } from "../../services/capacity.js";
import { requireRole } from "../auth.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import type { AppEnv } from "../request-context.js";
import { Timestamp } from "../schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { visibleOperator } from "./operator-access.js";
import { OperatorId } from "./party-schemas.js";

const ResourceWire = Resource.openapi({ description: "the machine class, exactly as its usage records name it", example: "gpu:h100" });

const Capacity = z
  .object({
    operator_id: z.string(),
    resource: z.string(),
    version: z.number().int().openapi({ description: "1, 2, … per operator and resource, in the order declared" }),
    units: z.number().int().openapi({ description: "how many of the resource the operator can sell at once", example: 8 }),
    effective_from: z.string(),
    until: z.string().nullable().openapi({ description: "none: until a later version takes effect" }),
    declared_by: z.string().openapi({ description: "the id of the key that declared it" }),
    created_at: z.string(),
  })
  .openapi("CapacityVersion");

const capacityOut = (c: CapacityDeclaration): z.infer<typeof Capacity> => ({
  operator_id: c.operatorId,
  resource: c.resource,
  version: c.version,
  units: c.units,
  effective_from: c.effectiveFrom.toISOString(),
  until: c.until?.toISOString() ?? null,
  declared_by: c.declaredBy,
  created_at: c.createdAt.toISOString(),
});

const Params = z.object({ id: OperatorId });

const declare = createRoute({
  method: "post",
  path: "/v1/operators/{id}/capacity",
  operationId: "declareOperatorCapacity",
  tags: ["operators"],
  summary: "Declare the next version of an operator's capacity of a resource (the operator itself, admin)",
  description:
    '`units` of the resource from `effective_from` until `until` (or until a later version). Versions are kept; a later one replaces an earlier one from its instant. Usage beyond the capacity over a record\'s period, across every marketplace, is refused or flagged (docs/usage.md, "Capacity").',
  security,
  middleware: [requireRole("admin", "operator"), jsonBodyGuard] as const,
  request: {
    params: Params,
    headers: IdempotencyHeader,
    body: jsonBody(
      z
        .strictObject({
          resource: ResourceWire,
          units: z.number().int().min(0).max(MAX_UNITS).openapi({ example: 8 }),
          effective_from: Timestamp,
          until: Timestamp.nullable().optional(),
        })
        .openapi("CapacityDeclare"),
    ),
  },
  responses: { 201: json(Capacity, "declared"), ...errorResponses },
});

const list = createRoute({
  method: "get",
  path: "/v1/operators/{id}/capacity",
  operationId: "listOperatorCapacity",
  tags: ["operators"],
  summary: "Every version of an operator's declared capacity (admin, finance, the operator itself)",
  security,
  middleware: [requireRole("admin", "finance", "operator")] as const,
  request: { params: Params, query: z.strictObject({ resource: ResourceWire.optional() }) },
  responses: { 200: json(z.object({ data: z.array(Capacity) }), "versions, by resource then version"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(declare, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    await visibleOperator(c, id);
    const db = c.get("deps").ledger.db;
    return idempotently(c, body, async (tx) => ({
      status: 201,
      body: capacityOut(
        await declareCapacity(tx, {
          operatorId: id,
          resource: body.resource,
          units: body.units,
          effectiveFrom: new Date(body.effective_from),
          until: body.until ? new Date(body.until) : null,
          by: c.get("principal").keyId,
          now: db.clock.now(),
        }),
      ),
    })) as never;
  });
  app.openapi(list, async (c) => {
    const { id } = c.req.valid("param");
    const q = c.req.valid("query");
    await visibleOperator(c, id);
    return c.json({ data: (await listCapacity(c.get("deps").ledger.db, id, q.resource)).map(capacityOut) }, 200);
  });
}
