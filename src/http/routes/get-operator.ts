import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { listOperators } from "../../services/party-reads.js";
import type { AppEnv } from "../request-context.js";
import { ApiError } from "../problem.js";
import { errorResponses, json, security } from "./common.js";
import { operatorScope, visibleMarketplaceIds } from "./party-access.js";
import { Operator, OperatorId, partyOut } from "./party-schemas.js";

const route = createRoute({
  method: "get",
  path: "/v1/operators/{id}",
  operationId: "getOperator",
  tags: ["usage"],
  summary: "Read an operator (admin, finance, a marketplace linked to it, the operator)",
  description: "A marketplace key sees only its own id among the operator's marketplace_ids; another key's operator is answered 404 as a missing one.",
  security,
  request: { params: z.object({ id: OperatorId }) },
  responses: { 200: json(Operator, "the operator"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const p = c.get("principal");
    const scope = operatorScope(p);
    // An operator the key may not see (another operator, one not linked to the marketplace) is answered as a missing one.
    const [o] = scope.id === undefined || scope.id === id ? await listOperators(c.get("deps").ledger.db, { ...scope, id, limit: 1 }) : [];
    if (!o) throw new ApiError("operator_not_found", `operator ${id} does not exist`);
    return c.json({ ...partyOut(o), marketplace_ids: visibleMarketplaceIds(p, o.marketplaceIds) }, 200);
  });
}
