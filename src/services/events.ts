import type { Principal } from "../domain/access.js";
import { eventScope } from "../domain/events.js";
import { eventsAfter, type EventRow } from "../db/queries/events.js";
import type { Queryable } from "./context.js";

export type { EventRow } from "../db/queries/events.js";
export { relayEvents, relayAllEvents } from "../db/event-relay.js";

/**
 * A page of the event log after a position, as one key may read it: a marketplace key its
 * marketplace's events, an operator key its own, admin and finance every event.
 */
export async function listEvents(
  db: Queryable,
  principal: Principal,
  q: { after: bigint; limit: number; types?: string[]; resourceType?: string; resourceId?: string },
): Promise<EventRow[]> {
  return eventsAfter(db, { ...q, ...eventScope(principal) });
}
