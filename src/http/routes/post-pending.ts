import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { actOnTransfer, optionalDate } from "../act-on-transfer.js";
import { requireRole } from "../auth.js";
import { jsonBodyGuard } from "../json-body.js";
import type { AppEnv } from "../request-context.js";
import { Amount } from "../money-schemas.js";
import { IdParam, Metadata, Timestamp, Transfer } from "../schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";

const Body = z
  .strictObject({
    amount: Amount.optional().openapi({ description: "post less than the hold (single-leg holds only); the rest is released" }),
    effective_at: Timestamp.optional().openapi({
      description:
        "when it is posted; defaults to now; not before the hold's effective time, nor more than 5 minutes ahead of the service's clock (refused otherwise: 400 naming effective_at)",
    }),
    metadata: Metadata.optional(),
  })
  .openapi("PostPending");

const route = createRoute({
  method: "post",
  path: "/v1/transfers/{id}/post",
  operationId: "postPendingTransfer",
  tags: ["ledger"],
  summary: "Post a hold, in full or in part (admin, marketplace)",
  security,
  middleware: [requireRole("admin", "marketplace"), jsonBodyGuard] as const,
  request: { params: IdParam, headers: IdempotencyHeader, body: jsonBody(Body, false) },
  responses: { 201: json(Transfer, "the post_pending transfer"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    return actOnTransfer(c, id, body, {
      kind: "post_pending",
      pendingId: id,
      amount: body.amount === undefined ? undefined : BigInt(body.amount),
      effectiveAt: optionalDate(body.effective_at),
      metadata: body.metadata,
    }) as never;
  });
}
