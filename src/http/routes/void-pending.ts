import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { actOnTransfer } from "../act-on-transfer.js";
import { requireRole } from "../auth.js";
import { jsonBodyGuard } from "../json-body.js";
import type { AppEnv } from "../request-context.js";
import { IdParam, Metadata, Transfer } from "../schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";

const Body = z.strictObject({ metadata: Metadata.optional() }).openapi("VoidPending");

const route = createRoute({
  method: "post",
  path: "/v1/transfers/{id}/void",
  operationId: "voidPendingTransfer",
  tags: ["ledger"],
  summary: "Release a hold (admin, marketplace)",
  security,
  middleware: [requireRole("admin", "marketplace"), jsonBodyGuard] as const,
  request: { params: IdParam, headers: IdempotencyHeader, body: jsonBody(Body, false) },
  responses: { 201: json(Transfer, "the void_pending transfer"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    return actOnTransfer(c, id, body, { kind: "void_pending", pendingId: id, metadata: body.metadata }) as never;
  });
}
