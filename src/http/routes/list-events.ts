import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { listEvents } from "../../services/events.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { ApiError } from "../problem.js";
import { page, pageOf } from "../schemas.js";
import { errorResponses, json, security } from "./common.js";
import { Event, eventOut, EventsQuery, typeFilter } from "./event-schemas.js";

const route = createRoute({
  method: "get",
  path: "/v1/events",
  operationId: "listEvents",
  tags: ["events"],
  summary: "The event log after a position, oldest first (each key reads its tenant's events; finance and admin all)",
  description:
    "Pass the `position` of the last event you processed as `cursor` to catch up after downtime: positions only grow, and an event never appears behind one already answered.",
  security,
  middleware: [requireRole("admin", "finance", "marketplace", "operator")] as const,
  request: { query: EventsQuery },
  responses: { 200: json(page(Event, "EventPage"), "a page of events in position order"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const { types, unknown } = typeFilter(q.type);
    if (unknown !== undefined)
      throw new ApiError("invalid_request", `${JSON.stringify(unknown)} is not an event type`, [{ path: "type", message: "unknown event type" }]);
    const rows = await listEvents(c.get("deps").ledger.db, c.get("principal"), {
      after: BigInt(q.cursor ?? "0"),
      limit: q.limit + 1,
      types,
      resourceType: q.resource_type,
      resourceId: q.resource_id,
    });
    return c.json(
      pageOf(rows, q.limit, eventOut, (r) => r.position.toString()),
      200,
    );
  });
}
