import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { updateOperator } from "../../services/update-operator.js";
import { requireRole } from "../auth.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { ApiError } from "../problem.js";
import type { AppEnv } from "../request-context.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { Operator, OperatorId, partyOut } from "./party-schemas.js";
import { PartyUpdate } from "./party-update-schemas.js";

const route = createRoute({
  method: "patch",
  path: "/v1/operators/{id}",
  operationId: "updateOperator",
  tags: ["usage"],
  summary: "Rename an operator or replace its metadata (admin, the operator)",
  description: "An operator is one for every marketplace it sells through: marketplaces do not rename it.",
  security,
  middleware: [requireRole("admin", "operator"), jsonBodyGuard] as const,
  request: { params: z.object({ id: OperatorId }), headers: IdempotencyHeader, body: jsonBody(PartyUpdate) },
  responses: { 200: json(Operator, "the operator as changed"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    const p = c.get("principal");
    // Another operator is answered as a missing one, without reading it.
    if (p.role === "operator" && p.scopeId !== id) throw new ApiError("operator_not_found", `operator ${id} does not exist`);
    return idempotently(c, body, async (tx) => {
      const o = await updateOperator(tx, { id, change: body });
      return { status: 200, body: { ...partyOut(o), marketplace_ids: o.marketplaceIds } };
    }) as never;
  });
}
