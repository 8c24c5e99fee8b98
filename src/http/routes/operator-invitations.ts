import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { acceptInvitation, listInvitations } from "../../services/marketplaces.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { ApiError } from "../problem.js";
import { errorResponses, IdempotencyHeader, json, NoBody, security } from "./common.js";
import { visibleOperator } from "./operator-access.js";
import { InvitationOut, invitationOut, MarketplaceId, OperatorId } from "./party-schemas.js";

const list = createRoute({
  method: "get",
  path: "/v1/operators/{id}/invitations",
  operationId: "listOperatorInvitations",
  tags: ["operators"],
  summary: "Marketplaces that asked to post this operator's usage, open and accepted (admin, finance, the operator)",
  security,
  middleware: [requireRole("admin", "finance", "operator")] as const,
  request: { params: z.object({ id: OperatorId }) },
  responses: { 200: json(z.object({ data: z.array(InvitationOut) }), "the invitations"), ...errorResponses },
});

const accept = createRoute({
  method: "post",
  path: "/v1/operators/{id}/invitations/{marketplace_id}/accept",
  operationId: "acceptOperatorInvitation",
  tags: ["operators"],
  summary: "Accept a marketplace's invitation: it may post the operator's usage from now on (the operator, admin)",
  security,
  middleware: [requireRole("admin", "operator"), jsonBodyGuard] as const,
  request: { params: z.object({ id: OperatorId, marketplace_id: MarketplaceId }), headers: IdempotencyHeader, body: NoBody },
  responses: { 200: json(InvitationOut, "accepted"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(list, async (c) => {
    const { id } = c.req.valid("param");
    await visibleOperator(c, id);
    return c.json({ data: (await listInvitations(c.get("deps").ledger.db, id)).map(invitationOut) }, 200);
  });
  app.openapi(accept, async (c) => {
    const { id, marketplace_id } = c.req.valid("param");
    const p = c.get("principal");
    if (p.role === "operator" && p.scopeId !== id) throw new ApiError("operator_not_found", `operator ${id} does not exist`);
    await visibleOperator(c, id);
    const db = c.get("deps").ledger.db;
    return idempotently(c, {}, async (tx) => ({
      status: 200,
      body: invitationOut(await acceptInvitation(tx, { now: db.clock.now(), by: p.keyId, operatorId: id, marketplaceId: marketplace_id })),
    })) as never;
  });
}
