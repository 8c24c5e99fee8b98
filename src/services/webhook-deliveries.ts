import type { Principal } from "../domain/access.js";
import { LedgerError } from "../domain/errors.js";
import { isUuid, uuidv7 } from "../domain/ids.js";
import { subscribes } from "../domain/webhooks.js";
import {
  findEvent,
  findWebhookDelivery,
  insertWebhookDelivery,
  listWebhookDeliveries as listRows,
  nextAttemptNumber,
  type WebhookDeliveryRow,
  type WebhookEndpointRow,
  type WebhookEventRow,
} from "../db/queries/webhooks.js";
import type { Queryable } from "./context.js";
import { managedWebhookEndpoint, visibleWebhookEndpoint } from "./webhook-endpoints.js";

/** Whether an endpoint receives an event: its tenant's (a platform endpoint: every event) and of a type it subscribed to. */
export function receives(
  e: Pick<WebhookEndpointRow, "marketplace_id" | "operator_id" | "event_types">,
  ev: Pick<WebhookEventRow, "marketplace_id" | "operator_id" | "type">,
) {
  if (e.marketplace_id !== null && ev.marketplace_id !== e.marketplace_id) return false;
  if (e.operator_id !== null && ev.operator_id !== e.operator_id) return false;
  return subscribes(e.event_types, ev.type);
}

/** An endpoint's delivery log, newest first; `cursor` is the id of the last delivery of the previous page. */
export async function listWebhookDeliveries(
  db: Queryable,
  p: Principal,
  q: { endpointId: string; cursor?: string; limit: number },
): Promise<WebhookDeliveryRow[]> {
  const endpoint = await visibleWebhookEndpoint(db, p, q.endpointId);
  let before: WebhookDeliveryRow | undefined;
  if (q.cursor !== undefined) {
    before = isUuid(q.cursor) ? await findWebhookDelivery(db, endpoint.id, q.cursor) : undefined;
    if (!before) throw new LedgerError("invalid_request", "cursor is not one this API returned", [{ path: "cursor", message: "invalid" }]);
  }
  return listRows(db, { endpointId: endpoint.id, before, limit: q.limit });
}

/**
 * Queues one more delivery of an event to an endpoint, named by a delivery of its log (uuid) or by
 * the event's id (evt_…, the webhook-id header). The worker sends it once, out of the endpoint's
 * order (it is a repeat), and logs the outcome on the returned row. A disabled endpoint can be sent
 * redeliveries too (to try a receiver before enabling it again).
 */
export async function redeliverWebhook(
  tx: Queryable,
  input: { principal: Principal; endpointId: string; target: string; now: Date },
): Promise<WebhookDeliveryRow> {
  const endpoint = await managedWebhookEndpoint(tx, input.principal, input.endpointId);
  const missing = () => new LedgerError("webhook_delivery_not_found", `webhook endpoint ${endpoint.id} has no delivery or event ${input.target}`);
  let event: WebhookEventRow | undefined;
  if (isUuid(input.target)) {
    const delivery = await findWebhookDelivery(tx, endpoint.id, input.target);
    if (!delivery) throw missing();
    event = await findEvent(tx, { position: BigInt(delivery.event_position) });
  } else {
    event = await findEvent(tx, { id: input.target });
    if (event && !receives(endpoint, event)) event = undefined;
  }
  if (!event) throw missing();
  const position = BigInt(event.position);
  return insertWebhookDelivery(tx, {
    id: uuidv7(input.now.getTime()),
    endpoint_id: endpoint.id,
    event_position: position,
    event_id: event.id,
    event_type: event.type,
    attempt: await nextAttemptNumber(tx, endpoint.id, position),
    manual: true,
    status: "pending",
    status_code: null,
    latency_ms: null,
    error: null,
    requested_by: input.principal.keyId,
    created_at: input.now,
    attempted_at: null,
  });
}
