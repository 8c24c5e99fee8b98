import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { registerOperator } from "../../services/marketplaces.js";
import { roles } from "../auth.js";
import type { AppEnv } from "../env.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { ApiError } from "../problem.js";
import { Metadata } from "../schemas.js";
import { PartyIdParam } from "../usage-schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { Operator, partyOut } from "./party-schemas.js";

const Body = z
  .strictObject({
    id: PartyIdParam.openapi({ description: "global operator id", example: "op-datacenter-7" }),
    name: z.string().min(1).max(200),
    marketplace_id: PartyIdParam.optional().openapi({ description: "admin keys: the marketplace to register the operator with (marketplace keys: always their own)" }),
    metadata: Metadata.optional(),
  })
  .openapi("OperatorRegister");

const route = createRoute({
  method: "post", path: "/v1/operators", tags: ["usage"],
  summary: "Register an operator, and let a marketplace post its usage (admin, marketplace)",
  description: "Operators are global: registering an existing operator with another marketplace only adds the link.",
  security,
  middleware: [roles("admin", "marketplace"), jsonBodyGuard] as const,
  request: { headers: IdempotencyHeader, body: jsonBody(Body) },
  responses: { 201: json(Operator, "registered"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const body = c.req.valid("json");
    const p = c.get("principal");
    const marketplaceId = p.role === "marketplace" ? p.scopeId! : body.marketplace_id;
    if (p.role === "marketplace" && body.marketplace_id !== undefined && body.marketplace_id !== p.scopeId) {
      throw new ApiError("forbidden", "a marketplace key registers operators with its own marketplace only");
    }
    return idempotently(c, body, async (tx) => {
      const o = await registerOperator(tx, { id: body.id, name: body.name, metadata: body.metadata, marketplaceId });
      // A marketplace key sees only its own link, not the operator's other marketplaces.
      const visible = p.role === "marketplace" ? o.marketplaceIds.filter((m) => m === p.scopeId) : o.marketplaceIds;
      return { status: 201, body: { ...partyOut(o), marketplace_ids: visible } };
    }) as never;
  });
}
