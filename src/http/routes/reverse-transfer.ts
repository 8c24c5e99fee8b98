import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { actOnTransfer, optionalDate } from "../act-on-transfer.js";
import { requireRole } from "../auth.js";
import { jsonBodyGuard } from "../json-body.js";
import type { AppEnv } from "../request-context.js";
import { IdParam, Metadata, Timestamp, Transfer } from "../schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";

const Body = z
  .strictObject({
    effective_at: Timestamp.optional().openapi({
      description:
        "when the correction takes effect; defaults to the original's effective time; not before it, nor more than 5 minutes ahead of the service's clock (refused otherwise: 400 naming effective_at)",
    }),
    metadata: Metadata.optional(),
  })
  .openapi("Reverse");

const route = createRoute({
  method: "post",
  path: "/v1/transfers/{id}/reverse",
  operationId: "reverseTransfer",
  tags: ["ledger"],
  summary: "Reverse a posted transfer, once, in full; effective when the original was unless effective_at says otherwise (admin, marketplace)",
  security,
  middleware: [requireRole("admin", "marketplace"), jsonBodyGuard] as const,
  request: { params: IdParam, headers: IdempotencyHeader, body: jsonBody(Body, false) },
  responses: { 201: json(Transfer, "the reversal transfer"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    return actOnTransfer(c, id, body, {
      kind: "reversal",
      reversesId: id,
      effectiveAt: optionalDate(body.effective_at),
      metadata: body.metadata,
    }) as never;
  });
}
