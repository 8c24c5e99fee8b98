import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { eventTypes } from "../../domain/events.js";
import type { WebhookDeliveryRow, WebhookEndpointRow, WebhookSettings } from "../../services/webhook-endpoints.js";
import { ApiError } from "../problem.js";
import type { AppEnv } from "../request-context.js";
import { Timestamp, Uuid } from "../schemas.js";

/** Schemas of the webhook routes (docs/api.md, "Webhooks"). */

/** One of the types the event log appends: a misspelt type would subscribe an endpoint to nothing, silently. */
export const EventType = z
  .enum(eventTypes, { error: () => `must be an event type (docs/api.md, "Event types"): ${eventTypes.join(", ")}` })
  .openapi({ example: "payout.confirmed" });

export const WebhookUrl = z.string().min(1).max(2000, "must be at most 2000 characters").openapi({ example: "https://hooks.example.com/ledger" });

export const EndpointId = z.object({ id: Uuid.openapi({ param: { name: "id", in: "path" } }) });

export const WebhookEndpoint = z
  .object({
    id: Uuid,
    url: z.string(),
    description: z.string().nullable(),
    event_types: z.array(z.string()).openapi({ description: "the event types delivered; empty: every type" }),
    status: z.enum(["enabled", "disabled", "deleted"]),
    disabled_reason: z
      .enum(["failing", "requested"])
      .nullable()
      .openapi({ description: "failing: every attempt failed for a day; requested: disabled by PATCH. null while enabled" }),
    marketplace_id: z.string().nullable().openapi({ description: "the marketplace whose events it receives (marketplace keys' endpoints)" }),
    operator_id: z.string().nullable().openapi({ description: "the operator whose events it receives (operator keys' endpoints); both null: every event" }),
    delivered_through: z.string().openapi({ description: "position of the last event delivered (or skipped at creation): the next one sent comes after it" }),
    failing_since: Timestamp.nullable().openapi({ description: "start of the current run of failed attempts; null when the last attempt succeeded" }),
    failed_attempts: z.number().int().openapi({ description: "failed attempts in a row at the next event" }),
    next_attempt_at: Timestamp.nullable().openapi({ description: "when the next event is retried after a failure (null: as soon as there is one)" }),
    previous_secret_expires_at: Timestamp.nullable().openapi({ description: "after a rotation: until when the previous secret still signs too" }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("WebhookEndpoint");

export const WebhookEndpointWithSecret = WebhookEndpoint.extend({
  secret: z.string().nullable().openapi({
    description: "the signing secret (whsec_…); shown in this response only (null when the response is replayed)",
    example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  }),
}).openapi("WebhookEndpointWithSecret");

export const WebhookDelivery = z
  .object({
    id: Uuid,
    endpoint_id: Uuid,
    event_id: z.string().openapi({ description: "the event (and the webhook-id header)", example: "evt_0193a5c2-7d41-7e6b-8f20-3c9d1e4b5a67" }),
    event_type: z.string(),
    event_position: z.string(),
    attempt: z.number().int().openapi({ description: "1, 2, … per event and endpoint (manual redeliveries included)" }),
    manual: z.boolean().openapi({ description: "a redelivery asked for by POST …/redeliver" }),
    status: z.enum(["pending", "succeeded", "failed"]).openapi({ description: "pending: a redelivery not sent yet" }),
    status_code: z.number().int().nullable().openapi({ description: "the receiver's HTTP status; null when it did not answer" }),
    latency_ms: z.number().int().nullable(),
    error: z.string().nullable().openapi({ description: "why the attempt failed (status, timeout, refused address, connection error)" }),
    created_at: Timestamp,
    attempted_at: Timestamp.nullable(),
  })
  .openapi("WebhookDelivery");

export function webhookEndpointOut(e: WebhookEndpointRow): z.infer<typeof WebhookEndpoint> {
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    event_types: e.event_types,
    status: e.status,
    disabled_reason: e.disabled_reason as "failing" | "requested" | null,
    marketplace_id: e.marketplace_id,
    operator_id: e.operator_id,
    delivered_through: e.cursor,
    failing_since: e.failing_since?.toISOString() ?? null,
    failed_attempts: e.attempts,
    next_attempt_at: e.next_attempt_at?.toISOString() ?? null,
    previous_secret_expires_at: e.previous_secret && e.previous_secret_until ? e.previous_secret_until.toISOString() : null,
    created_at: e.created_at.toISOString(),
    updated_at: e.updated_at.toISOString(),
  };
}

export function webhookDeliveryOut(d: WebhookDeliveryRow): z.infer<typeof WebhookDelivery> {
  return {
    id: d.id,
    endpoint_id: d.endpoint_id,
    event_id: d.event_id,
    event_type: d.event_type,
    event_position: d.event_position,
    attempt: d.attempt,
    manual: d.manual,
    status: d.status,
    status_code: d.status_code,
    latency_ms: d.latency_ms,
    error: d.error,
    created_at: d.created_at.toISOString(),
    attempted_at: d.attempted_at?.toISOString() ?? null,
  };
}

/** The deployment's webhook settings (503 when this process was started without them). */
export function webhookSettings(c: Context<AppEnv>): WebhookSettings {
  const s = c.get("deps").webhooks;
  if (!s) throw new ApiError("unavailable", "webhooks are not configured on this process");
  return s;
}
