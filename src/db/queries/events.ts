import { and, asc, eq, gt, inArray, type SQL } from "drizzle-orm";
import type { Queryable } from "../client.js";
import { orm, run } from "../orm.js";
import { events } from "../schema/index.js";

/** One event of the log (src/db/schema/events.ts), as read by a cursor. */
export type EventRow = {
  position: bigint;
  id: string;
  type: string;
  marketplace_id: string | null;
  operator_id: string | null;
  resource_type: string;
  resource_id: string;
  data: Record<string, unknown>;
  occurred_at: Date;
};

export interface EventsFilter {
  /** Position of the last event the reader has (0n: from the start). */
  after: bigint;
  limit: number;
  types?: string[];
  resourceType?: string;
  resourceId?: string;
  /** Tenant scope: only this marketplace's events (a marketplace key's reads always set it). */
  marketplaceId?: string;
  /** Tenant scope: only this operator's events (an operator key's reads always set it). */
  operatorId?: string;
}

/**
 * Up to `limit` events after position `after`, in position order. Positions are appended in order
 * by the relay only, so the next page starts after the last position of this one and never misses
 * an event committed later (docs/api.md, "Events").
 */
export async function eventsAfter(db: Queryable, f: EventsFilter): Promise<EventRow[]> {
  const where: (SQL | undefined)[] = [gt(events.position, f.after)];
  if (f.types && f.types.length > 0) where.push(inArray(events.type, f.types));
  if (f.resourceType !== undefined) where.push(eq(events.resourceType, f.resourceType));
  if (f.resourceId !== undefined) where.push(eq(events.resourceId, f.resourceId));
  if (f.marketplaceId !== undefined) where.push(eq(events.marketplaceId, f.marketplaceId));
  if (f.operatorId !== undefined) where.push(eq(events.operatorId, f.operatorId));
  const rows = await run(
    orm(db)
      .select({
        position: events.position,
        id: events.id,
        type: events.type,
        marketplace_id: events.marketplaceId,
        operator_id: events.operatorId,
        resource_type: events.resourceType,
        resource_id: events.resourceId,
        data: events.data,
        occurred_at: events.occurredAt,
      })
      .from(events)
      .where(and(...where))
      .orderBy(asc(events.position))
      .limit(f.limit),
  );
  return rows.map((r) => ({
    ...r,
    position: BigInt(r.position),
    data: r.data as Record<string, unknown>,
    occurred_at: r.occurred_at instanceof Date ? r.occurred_at : new Date(r.occurred_at as unknown as string),
  }));
}

/** The last position appended (0n when the log is empty). */
export async function lastEventPosition(db: Queryable): Promise<bigint> {
  const [row] = await db.query<{ p: string }>("select coalesce(max(position), 0)::text as p from events");
  return BigInt(row?.p ?? "0");
}
