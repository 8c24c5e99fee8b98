import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { deleteWebhookEndpoint, rotateWebhookSecret, updateWebhookEndpoint, visibleWebhookEndpoint } from "../../services/webhook-endpoints.js";
import { requireRole } from "../auth.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import type { AppEnv } from "../request-context.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, NoBody, security } from "./common.js";
import { EndpointId, EventType, WebhookEndpoint, WebhookEndpointWithSecret, webhookEndpointOut, webhookSettings, WebhookUrl } from "./webhook-schemas.js";

const roles = ["admin", "finance", "marketplace", "operator"] as const;

export const WebhookEndpointUpdate = z
  .strictObject({
    url: WebhookUrl.optional(),
    event_types: z.array(EventType).max(100).optional(),
    description: z.string().max(500).nullable().optional(),
    status: z.enum(["enabled", "disabled"]).optional().openapi({ description: "enabled again: delivery resumes at the first event not delivered" }),
  })
  .openapi("WebhookEndpointUpdate");

export const SecretRotation = z
  .strictObject({
    overlap_seconds: z
      .number()
      .int()
      .min(0)
      .max(7 * 86_400)
      .optional()
      .openapi({ description: "how long the previous secret keeps signing too (default a day; 0: stops at once)", example: 86400 }),
  })
  .openapi("WebhookSecretRotation");

const base = { tags: ["webhooks"], security, request: { params: EndpointId } };

const get = createRoute({
  ...base,
  method: "get",
  path: "/v1/webhook-endpoints/{id}",
  operationId: "getWebhookEndpoint",
  summary: "A webhook endpoint (its tenant's keys; finance and admin)",
  middleware: [requireRole(...roles)] as const,
  responses: { 200: json(WebhookEndpoint, "the endpoint"), ...errorResponses },
});

const patch = createRoute({
  ...base,
  method: "patch",
  path: "/v1/webhook-endpoints/{id}",
  operationId: "updateWebhookEndpoint",
  summary: "Change a webhook endpoint's URL, event types, description, or enable or disable it",
  middleware: [requireRole(...roles), jsonBodyGuard] as const,
  request: { params: EndpointId, headers: IdempotencyHeader, body: jsonBody(WebhookEndpointUpdate) },
  responses: { 200: json(WebhookEndpoint, "the endpoint as changed"), ...errorResponses },
});

const del = createRoute({
  ...base,
  method: "delete",
  path: "/v1/webhook-endpoints/{id}",
  operationId: "deleteWebhookEndpoint",
  summary: "Delete a webhook endpoint: nothing more is sent to it",
  middleware: [requireRole(...roles), jsonBodyGuard] as const,
  request: { params: EndpointId, body: NoBody },
  responses: { 200: json(WebhookEndpoint, "the endpoint, deleted"), ...errorResponses },
});

const rotate = createRoute({
  ...base,
  method: "post",
  path: "/v1/webhook-endpoints/{id}/rotate-secret",
  operationId: "rotateWebhookSecret",
  summary: "A new signing secret (shown once); the previous one keeps signing beside it for the overlap",
  middleware: [requireRole(...roles), jsonBodyGuard] as const,
  request: { params: EndpointId, headers: IdempotencyHeader, body: jsonBody(SecretRotation, false) },
  responses: { 200: json(WebhookEndpointWithSecret, "rotated; the new secret is shown in this answer only"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(get, async (c) => {
    const row = await visibleWebhookEndpoint(c.get("deps").ledger.db, c.get("principal"), c.req.valid("param").id);
    return c.json(webhookEndpointOut(row), 200);
  });
  app.openapi(patch, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    const settings = webhookSettings(c);
    const now = c.get("deps").ledger.db.clock.now();
    return idempotently(c, body, async (tx) => {
      const row = await updateWebhookEndpoint(tx, settings, {
        principal: c.get("principal"),
        id,
        url: body.url,
        eventTypes: body.event_types,
        description: body.description,
        status: body.status,
        now,
      });
      return { status: 200, body: webhookEndpointOut(row) };
    }) as never;
  });
  app.openapi(del, async (c) => {
    const { id } = c.req.valid("param");
    const now = c.get("deps").ledger.db.clock.now();
    return idempotently(c, {}, async (tx) => ({
      status: 200,
      body: webhookEndpointOut(await deleteWebhookEndpoint(tx, { principal: c.get("principal"), id, now })),
    })) as never;
  });
  app.openapi(rotate, async (c) => {
    const { id } = c.req.valid("param");
    const body = (c.req.valid("json") as z.infer<typeof SecretRotation> | undefined) ?? {};
    const settings = webhookSettings(c);
    const now = c.get("deps").ledger.db.clock.now();
    return idempotently(c, body, async (tx) => {
      const overlapMs = body.overlap_seconds === undefined ? undefined : body.overlap_seconds * 1000;
      const made = await rotateWebhookSecret(tx, settings, { principal: c.get("principal"), id, now, overlapMs });
      const out = webhookEndpointOut(made.endpoint);
      return { status: 200, body: { ...out, secret: made.secret }, stored: { ...out, secret: null } };
    }) as never;
  });
}
