import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { isUuid } from "../../domain/ids.js";
import { createWebhookEndpoint, listWebhookEndpoints } from "../../services/webhook-endpoints.js";
import { requireRole } from "../auth.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { ApiError } from "../problem.js";
import type { AppEnv } from "../request-context.js";
import { CursorQuery, page, pageOf } from "../schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { EventType, WebhookEndpoint, WebhookEndpointWithSecret, webhookEndpointOut, webhookSettings, WebhookUrl } from "./webhook-schemas.js";

const roles = ["admin", "finance", "marketplace", "operator"] as const;

export const WebhookEndpointCreate = z
  .strictObject({
    url: WebhookUrl.openapi({ description: "http(s) URL of the receiver; its host must resolve to public addresses" }),
    event_types: z.array(EventType).max(100).default([]).openapi({ description: "the event types to deliver; empty or absent: every type" }),
    description: z.string().max(500).nullable().optional(),
  })
  .openapi("WebhookEndpointCreate");

const create = createRoute({
  method: "post",
  path: "/v1/webhook-endpoints",
  operationId: "createWebhookEndpoint",
  tags: ["webhooks"],
  summary: "Register a webhook endpoint for the key's tenant; its signing secret is shown once",
  description:
    "A marketplace key's endpoint receives its marketplace's events, an operator key's its operator's, a finance or admin key's every event; from the moment it is created on, signed as Standard Webhooks.",
  security,
  middleware: [requireRole(...roles), jsonBodyGuard] as const,
  request: { headers: IdempotencyHeader, body: jsonBody(WebhookEndpointCreate) },
  responses: { 201: json(WebhookEndpointWithSecret, "created; the secret is shown in this answer only"), ...errorResponses },
});

const list = createRoute({
  method: "get",
  path: "/v1/webhook-endpoints",
  operationId: "listWebhookEndpoints",
  tags: ["webhooks"],
  summary: "List the webhook endpoints this key may see (its tenant's; finance and admin: all)",
  security,
  middleware: [requireRole(...roles)] as const,
  request: { query: CursorQuery },
  responses: { 200: json(page(WebhookEndpoint, "WebhookEndpointPage"), "a page of endpoints"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(create, async (c) => {
    const body = c.req.valid("json");
    const settings = webhookSettings(c);
    const now = c.get("deps").ledger.db.clock.now();
    return idempotently(c, body, async (tx) => {
      const made = await createWebhookEndpoint(tx, settings, {
        principal: c.get("principal"),
        url: body.url,
        eventTypes: body.event_types,
        description: body.description,
        now,
      });
      const out = webhookEndpointOut(made.endpoint);
      // The secret never reaches the database in clear: a replay answers with secret null.
      return { status: 201, body: { ...out, secret: made.secret }, stored: { ...out, secret: null } };
    }) as never;
  });
  app.openapi(list, async (c) => {
    const { cursor, limit } = c.req.valid("query");
    if (cursor !== undefined && !isUuid(cursor))
      throw new ApiError("invalid_request", "cursor is not one this API returned", [{ path: "cursor", message: "invalid" }]);
    const rows = await listWebhookEndpoints(c.get("deps").ledger.db, c.get("principal"), { after: cursor, limit: limit + 1 });
    return c.json(
      pageOf(rows, limit, webhookEndpointOut, (r) => r.id),
      200,
    );
  });
}
