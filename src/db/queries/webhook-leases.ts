import type { Queryable } from "../client.js";
import type { WebhookDeliveryRow, WebhookEndpointRow } from "./webhooks.js";

/**
 * The webhook worker's coordination (src/workers/webhooks/): an endpoint is delivered to by the
 * worker holding its lease. Claiming takes due endpoints whose lease is free or lapsed with
 * FOR UPDATE SKIP LOCKED, so concurrent workers never claim the same one; every later write is
 * fenced by the lease token, so a worker whose lease lapsed (it stalled, or was presumed dead)
 * cannot move the endpoint's cursor after another took over.
 */

const ENDPOINT = `id, marketplace_id, operator_id, url, description, event_types, status, disabled_reason, secret, previous_secret,
  previous_secret_until, cursor::text as cursor, attempts, failing_since, next_attempt_at, lease_token, lease_until, created_by, created_at, updated_at`;

/** Claims up to `limit` enabled endpoints due at `now` whose lease is free, for `token` until `until`. */
export async function claimWebhookEndpoints(db: Queryable, q: { now: Date; until: Date; token: string; limit: number }): Promise<WebhookEndpointRow[]> {
  return db.query<WebhookEndpointRow>(
    `update webhook_endpoints set lease_token = $1, lease_until = $2
     where id in (
       select id from webhook_endpoints w
       where status = 'enabled' and (next_attempt_at is null or next_attempt_at <= $3 or exists (
               select 1 from webhook_deliveries d where d.endpoint_id = w.id and d.status = 'pending'))
         and (lease_until is null or lease_until <= $3)
       order by next_attempt_at nulls first, id limit $4 for update skip locked)
     returning ${ENDPOINT}`,
    [q.token, q.until.toISOString(), q.now.toISOString(), q.limit],
  );
}

/** Extends a held lease; false when it was lost. */
export async function extendWebhookLease(db: Queryable, id: string, token: string, until: Date): Promise<boolean> {
  const rows = await db.query("update webhook_endpoints set lease_until = $3 where id = $1 and lease_token = $2 returning id", [
    id,
    token,
    until.toISOString(),
  ]);
  return rows.length === 1;
}

export async function releaseWebhookLease(db: Queryable, id: string, token: string): Promise<void> {
  await db.query("update webhook_endpoints set lease_token = null, lease_until = null where id = $1 and lease_token = $2", [id, token]);
}

/** The endpoint row if this worker still holds its lease (locked for the caller's transaction). */
export async function leasedEndpoint(tx: Queryable, id: string, token: string): Promise<WebhookEndpointRow | undefined> {
  const [row] = await tx.query<WebhookEndpointRow>(`select ${ENDPOINT} from webhook_endpoints where id = $1 and lease_token = $2 for update`, [id, token]);
  return row;
}

/** After a delivered event: the cursor moves past it and the failure streak ends. */
export async function advanceWebhookCursor(tx: Queryable, id: string, position: bigint, at: Date): Promise<void> {
  await tx.query(
    `update webhook_endpoints set cursor = greatest(cursor, $2), attempts = 0, failing_since = null, next_attempt_at = null, updated_at = $3
     where id = $1`,
    [id, position.toString(), at.toISOString()],
  );
}

/** After a failed attempt: the next one is due at `next`; the failure streak started at failing_since. */
export async function scheduleWebhookRetry(tx: Queryable, id: string, r: { attempts: number; failingSince: Date; next: Date; at: Date }): Promise<void> {
  await tx.query("update webhook_endpoints set attempts = $2, failing_since = $3, next_attempt_at = $4, updated_at = $5 where id = $1", [
    id,
    r.attempts,
    r.failingSince.toISOString(),
    r.next.toISOString(),
    r.at.toISOString(),
  ]);
}

/** A day of failures: the endpoint stops being delivered to (its cursor stays at the undelivered event). */
export async function disableFailingEndpoint(tx: Queryable, id: string, at: Date): Promise<void> {
  await tx.query(
    `update webhook_endpoints set status = 'disabled', disabled_reason = 'failing', next_attempt_at = null, lease_token = null, lease_until = null,
       updated_at = $2 where id = $1`,
    [id, at.toISOString()],
  );
}

/** Manual redeliveries of an endpoint waiting to be sent, oldest first. */
export async function pendingRedeliveries(db: Queryable, endpointId: string, limit: number): Promise<WebhookDeliveryRow[]> {
  return db.query<WebhookDeliveryRow>(
    `select id, endpoint_id, event_position::text as event_position, event_id, event_type, attempt, manual, status, status_code, latency_ms, error,
       requested_by, created_at, attempted_at
     from webhook_deliveries where endpoint_id = $1 and status = 'pending' order by created_at, id limit $2`,
    [endpointId, limit],
  );
}

/** Records the outcome of a manual redelivery (once: a row already completed is left as it is). */
export async function completeRedelivery(
  tx: Queryable,
  id: string,
  r: { ok: boolean; statusCode: number | null; latencyMs: number; error: string | null; at: Date },
): Promise<void> {
  await tx.query(
    "update webhook_deliveries set status = $2, status_code = $3, latency_ms = $4, error = $5, attempted_at = $6 where id = $1 and status = 'pending'",
    [id, r.ok ? "succeeded" : "failed", r.statusCode, r.latencyMs, r.error, r.at.toISOString()],
  );
}
