import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { listWebhookDeliveries, redeliverWebhook } from "../../services/webhook-deliveries.js";
import { requireRole } from "../auth.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import type { AppEnv } from "../request-context.js";
import { CursorQuery, page, pageOf, Uuid } from "../schemas.js";
import { errorResponses, IdempotencyHeader, json, NoBody, security } from "./common.js";
import { WebhookDelivery, webhookDeliveryOut } from "./webhook-schemas.js";

const roles = ["admin", "finance", "marketplace", "operator"] as const;

const list = createRoute({
  method: "get",
  path: "/v1/webhook-endpoints/{id}/deliveries",
  operationId: "listWebhookDeliveries",
  tags: ["webhooks"],
  summary: "The delivery log of a webhook endpoint, newest first: each attempt with its status code and latency",
  security,
  middleware: [requireRole(...roles)] as const,
  request: { params: z.object({ id: Uuid.openapi({ param: { name: "id", in: "path" } }) }), query: CursorQuery },
  responses: { 200: json(page(WebhookDelivery, "WebhookDeliveryPage"), "a page of attempts"), ...errorResponses },
});

const Target = z
  .string()
  .regex(/^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|evt_[A-Za-z0-9_-]{1,100})$/, "must be a delivery id (uuid) or an event id (evt_…)")
  .openapi({ param: { name: "target", in: "path" }, example: "evt_0193a5c2-7d41-7e6b-8f20-3c9d1e4b5a67" });

const redeliver = createRoute({
  method: "post",
  path: "/v1/webhook-endpoints/{id}/deliveries/{target}/redeliver",
  operationId: "redeliverWebhook",
  tags: ["webhooks"],
  summary: "Send an event to the endpoint once more (named by a delivery of its log or by the event's id)",
  description: "Queued for the worker, which sends it once (out of the endpoint's order: a repeat) and logs the outcome on the returned delivery.",
  security,
  middleware: [requireRole(...roles), jsonBodyGuard] as const,
  request: { params: z.object({ id: Uuid.openapi({ param: { name: "id", in: "path" } }), target: Target }), headers: IdempotencyHeader, body: NoBody },
  responses: { 202: json(WebhookDelivery, "queued"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(list, async (c) => {
    const { cursor, limit } = c.req.valid("query");
    const rows = await listWebhookDeliveries(c.get("deps").ledger.db, c.get("principal"), { endpointId: c.req.valid("param").id, cursor, limit: limit + 1 });
    return c.json(
      pageOf(rows, limit, webhookDeliveryOut, (r) => r.id),
      200,
    );
  });
  app.openapi(redeliver, async (c) => {
    const { id, target } = c.req.valid("param");
    const now = c.get("deps").ledger.db.clock.now();
    return idempotently(c, {}, async (tx) => ({
      status: 202,
      body: webhookDeliveryOut(await redeliverWebhook(tx, { principal: c.get("principal"), endpointId: id, target, now })),
    })) as never;
  });
}
