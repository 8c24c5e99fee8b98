import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { registerOperator, registerOperatorForMarketplace } from "../../services/marketplaces.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { ApiError } from "../problem.js";
import { Metadata } from "../schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { InvitationOut, invitationOut, MarketplaceId, Operator, PartyIdParam, partyOut } from "./party-schemas.js";

const Body = z
  .strictObject({
    id: PartyIdParam.openapi({ description: "global operator id", example: "op-datacenter-7" }),
    name: z.string().min(1).max(200),
    marketplace_id: MarketplaceId.optional().openapi({
      description: "admin keys: the marketplace to register the operator with (marketplace keys: always their own)",
    }),
    metadata: Metadata.optional(),
  })
  .openapi("OperatorRegister");

const route = createRoute({
  method: "post",
  path: "/v1/operators",
  operationId: "registerOperator",
  tags: ["usage"],
  summary: "Register an operator, and let a marketplace post its usage (admin, marketplace)",
  description:
    "Operators are global. A marketplace key registers a new operator (201), or its own again (201); an operator id that exists without a link to the marketplace is answered 202 with an invitation, which the operator's own key (or an admin) accepts (POST /v1/operators/{id}/invitations/{marketplace_id}/accept). The answer reveals nothing about that operator. An admin key links an existing operator directly.",
  security,
  middleware: [requireRole("admin", "marketplace"), jsonBodyGuard] as const,
  request: { headers: IdempotencyHeader, body: jsonBody(Body) },
  responses: {
    201: json(Operator, "registered"),
    202: json(InvitationOut, "an operator with this id exists and is not linked to the marketplace: invited; it joins when it accepts"),
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const body = c.req.valid("json");
    const p = c.get("principal");
    const marketplaceId = p.role === "marketplace" ? p.scopeId! : body.marketplace_id;
    if (p.role === "marketplace" && body.marketplace_id !== undefined && body.marketplace_id !== p.scopeId) {
      throw new ApiError("forbidden", "a marketplace key registers operators with its own marketplace only");
    }
    if (p.role === "marketplace") {
      return idempotently(c, body, async (tx) => {
        const r = await registerOperatorForMarketplace(tx, {
          now: c.get("deps").ledger.db.clock.now(),
          by: p.keyId,
          id: body.id,
          name: body.name,
          metadata: body.metadata,
          marketplaceId: p.scopeId!,
        });
        if (r.kind === "invited") return { status: 202, body: invitationOut(r.invitation) };
        // A marketplace key sees only its own link, not the operator's other marketplaces.
        return { status: 201, body: { ...partyOut(r.operator), marketplace_ids: [p.scopeId!] } };
      }) as never;
    }
    return idempotently(c, body, async (tx) => {
      const o = await registerOperator(tx, { id: body.id, name: body.name, metadata: body.metadata, marketplaceId });
      // A marketplace key sees only its own link, not the operator's other marketplaces.
      const visible = p.role === "marketplace" ? o.marketplaceIds.filter((m) => m === p.scopeId) : o.marketplaceIds;
      return { status: 201, body: { ...partyOut(o), marketplace_ids: visible } };
    }) as never;
  });
}
