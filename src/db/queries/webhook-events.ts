import type { Queryable } from "../client.js";

/**
 * Appends `webhook_endpoint.disabled` to the event log, in the caller's transaction, as the relay
 * appends (src/db/event-relay.ts): under the relay's advisory lock, held until the transaction
 * ends, at the position after event_relay.last_position. Appends stay one at a time, and a
 * position becomes readable before any later one is even taken (the rule of src/db/schema/events.ts).
 */
const RELAY_LOCK = 7_420_003; // src/db/event-relay.ts
export async function appendEndpointDisabledEvent(
  tx: Queryable,
  e: { eventId: string; endpointId: string; marketplaceId: string | null; operatorId: string | null; data: Record<string, unknown>; at: Date },
): Promise<bigint> {
  await tx.query("select pg_advisory_xact_lock($1)", [RELAY_LOCK]);
  const [row] = await tx.query<{ position: string }>(
    `with r as (update event_relay set last_position = last_position + 1, updated_at = $6 where id = 1 returning last_position)
     insert into events (position, id, type, marketplace_id, operator_id, resource_type, resource_id, data, occurred_at)
     select r.last_position, $1, 'webhook_endpoint.disabled', $2, $3, 'webhook_endpoint', $4, $5::jsonb, $6 from r
     returning position::text as position`,
    [e.eventId, e.marketplaceId, e.operatorId, e.endpointId, JSON.stringify(e.data), e.at.toISOString()],
  );
  if (!row) throw new Error("the event log has no relay row (event_relay id 1)");
  return BigInt(row.position);
}
