import type { Queryable } from "../client.js";

/** Webhook endpoints and their delivery log (src/services/webhook-endpoints.ts, src/workers/webhooks/). */

export interface WebhookEndpointRow {
  id: string;
  marketplace_id: string | null;
  operator_id: string | null;
  url: string;
  description: string | null;
  event_types: string[];
  status: "enabled" | "disabled" | "deleted";
  disabled_reason: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: Date | null;
  cursor: string;
  attempts: number;
  failing_since: Date | null;
  next_attempt_at: Date | null;
  lease_token: string | null;
  lease_until: Date | null;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

export interface WebhookDeliveryRow {
  id: string;
  endpoint_id: string;
  event_position: string;
  event_id: string;
  event_type: string;
  attempt: number;
  manual: boolean;
  status: "pending" | "succeeded" | "failed";
  status_code: number | null;
  latency_ms: number | null;
  error: string | null;
  requested_by: string | null;
  created_at: Date;
  attempted_at: Date | null;
}

/** Whose endpoints: one marketplace's, one operator's, the platform's (finance, admin), or every one (for reads by finance and admin). */
export type EndpointOwner = { marketplaceId: string | null; operatorId: string | null } | "any";

const ENDPOINT = `id, marketplace_id, operator_id, url, description, event_types, status, disabled_reason, secret, previous_secret,
  previous_secret_until, cursor::text as cursor, attempts, failing_since, next_attempt_at, lease_token, lease_until, created_by, created_at, updated_at`;
const DELIVERY = `id, endpoint_id, event_position::text as event_position, event_id, event_type, attempt, manual, status, status_code,
  latency_ms, error, requested_by, created_at, attempted_at`;

const ownerClause = (owner: EndpointOwner, first: number): { sql: string; params: unknown[] } =>
  owner === "any"
    ? { sql: "true", params: [] }
    : {
        sql: `marketplace_id is not distinct from $${first} and operator_id is not distinct from $${first + 1}`,
        params: [owner.marketplaceId, owner.operatorId],
      };

export async function insertWebhookEndpoint(
  tx: Queryable,
  e: Pick<WebhookEndpointRow, "id" | "marketplace_id" | "operator_id" | "url" | "description" | "event_types" | "secret" | "created_by" | "created_at">,
): Promise<WebhookEndpointRow> {
  const [row] = await tx.query<WebhookEndpointRow>(
    `insert into webhook_endpoints (id, marketplace_id, operator_id, url, description, event_types, status, secret, cursor, created_by, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6::text[], 'enabled', $7, (select coalesce(max(position), 0) from events), $8, $9, $9)
     returning ${ENDPOINT}`,
    [e.id, e.marketplace_id, e.operator_id, e.url, e.description, e.event_types, e.secret, e.created_by, e.created_at.toISOString()],
  );
  return row!;
}

/** An endpoint (not deleted) of this owner, or undefined. */
export async function findWebhookEndpoint(db: Queryable, id: string, owner: EndpointOwner, forUpdate = false): Promise<WebhookEndpointRow | undefined> {
  const o = ownerClause(owner, 2);
  const [row] = await db.query<WebhookEndpointRow>(
    `select ${ENDPOINT} from webhook_endpoints where id = $1 and status <> 'deleted' and ${o.sql}${forUpdate ? " for update" : ""}`,
    [id, ...o.params],
  );
  return row;
}

export async function listWebhookEndpoints(db: Queryable, q: { owner: EndpointOwner; after?: string; limit: number }): Promise<WebhookEndpointRow[]> {
  const o = ownerClause(q.owner, 3);
  return db.query<WebhookEndpointRow>(
    `select ${ENDPOINT} from webhook_endpoints where status <> 'deleted' and ($1::uuid is null or id > $1) and ${o.sql} order by id limit $2`,
    [q.after ?? null, q.limit, ...o.params],
  );
}

/** Sets the given columns of an endpoint (and updated_at); returns the row. */
export async function updateWebhookEndpoint(
  tx: Queryable,
  id: string,
  set: Partial<
    Pick<
      WebhookEndpointRow,
      | "url"
      | "description"
      | "event_types"
      | "status"
      | "disabled_reason"
      | "secret"
      | "previous_secret"
      | "previous_secret_until"
      | "attempts"
      | "failing_since"
      | "next_attempt_at"
    >
  >,
  at: Date,
): Promise<WebhookEndpointRow> {
  const entries = Object.entries(set);
  const assignments = entries.map(([col, v], i) => `${col} = $${i + 3}${Array.isArray(v) ? "::text[]" : ""}`);
  const [row] = await tx.query<WebhookEndpointRow>(
    `update webhook_endpoints set ${[...assignments, "updated_at = $2"].join(", ")} where id = $1 returning ${ENDPOINT}`,
    [id, at.toISOString(), ...entries.map(([, v]) => (v instanceof Date ? v.toISOString() : v))],
  );
  return row!;
}

/** The delivery log of an endpoint, newest first. */
export async function listWebhookDeliveries(
  db: Queryable,
  q: { endpointId: string; before?: WebhookDeliveryRow; limit: number },
): Promise<WebhookDeliveryRow[]> {
  // Newest first; attempts made at one instant (a clock that stood still) in the order of their events and attempts.
  return db.query<WebhookDeliveryRow>(
    `select ${DELIVERY} from webhook_deliveries where endpoint_id = $1
       and ($2::timestamptz is null or (created_at, event_position, attempt, id) < ($2, $3::bigint, $4::int, $5::uuid))
     order by created_at desc, event_position desc, attempt desc, id desc limit $6`,
    [q.endpointId, q.before?.created_at.toISOString() ?? null, q.before?.event_position ?? null, q.before?.attempt ?? null, q.before?.id ?? null, q.limit],
  );
}

export async function findWebhookDelivery(db: Queryable, endpointId: string, id: string): Promise<WebhookDeliveryRow | undefined> {
  const [row] = await db.query<WebhookDeliveryRow>(`select ${DELIVERY} from webhook_deliveries where endpoint_id = $1 and id = $2`, [endpointId, id]);
  return row;
}

export async function insertWebhookDelivery(
  tx: Queryable,
  d: Omit<WebhookDeliveryRow, "event_position" | "requested_by" | "attempted_at"> & {
    event_position: bigint;
    requested_by?: string | null;
    attempted_at: Date | null;
  },
): Promise<WebhookDeliveryRow> {
  const [row] = await tx.query<WebhookDeliveryRow>(
    `insert into webhook_deliveries (id, endpoint_id, event_position, event_id, event_type, attempt, manual, status, status_code, latency_ms, error, requested_by, created_at, attempted_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) returning ${DELIVERY}`,
    [
      d.id,
      d.endpoint_id,
      d.event_position.toString(),
      d.event_id,
      d.event_type,
      d.attempt,
      d.manual,
      d.status,
      d.status_code,
      d.latency_ms,
      d.error,
      d.requested_by ?? null,
      d.created_at.toISOString(),
      d.attempted_at?.toISOString() ?? null,
    ],
  );
  return row!;
}

/** The number the next attempt at an event gets in the log. */
export async function nextAttemptNumber(db: Queryable, endpointId: string, position: bigint): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    "select coalesce(max(attempt), 0)::int + 1 as n from webhook_deliveries where endpoint_id = $1 and event_position = $2",
    [endpointId, position.toString()],
  );
  return row!.n;
}

export interface WebhookEventRow {
  position: string;
  id: string;
  type: string;
  marketplace_id: string | null;
  operator_id: string | null;
  data: Record<string, unknown>;
  occurred_at: Date;
}

const EVENT = "position::text as position, id, type, marketplace_id, operator_id, data, occurred_at";

/** An event by its public id (evt_…) or by its position. */
export async function findEvent(db: Queryable, by: { id: string } | { position: bigint }): Promise<WebhookEventRow | undefined> {
  const [row] =
    "id" in by
      ? await db.query<WebhookEventRow>(`select ${EVENT} from events where id = $1`, [by.id])
      : await db.query<WebhookEventRow>(`select ${EVENT} from events where position = $1`, [by.position.toString()]);
  return row;
}
