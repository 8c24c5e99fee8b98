import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { pendingMigrations } from "../../services/context.js";
import { databaseReachable } from "../../services/health.js";
import type { AppEnv } from "../request-context.js";
import { ApiError } from "../problem.js";
import { errorResponses, json } from "./common.js";

const Health = z
  .object({
    status: z.literal("ok"),
    time: z.string().openapi({ description: 'the service clock\'s instant (ISO 8601, UTC): what "now" is for every rule and report' }),
  })
  .openapi("Health");

const healthz = createRoute({
  method: "get",
  path: "/healthz",
  operationId: "checkLiveness",
  tags: ["operations"],
  summary: "The process is alive",
  // Public: no key (a load balancer or orchestrator calls it, on either listener).
  security: [],
  responses: { 200: json(Health, "alive"), 400: errorResponses[400] },
});

const readyz = createRoute({
  method: "get",
  path: "/readyz",
  operationId: "checkReadiness",
  tags: ["operations"],
  summary: "The database is reachable and migrated",
  // Public: no key, like /healthz.
  security: [],
  responses: { 200: json(Health, "ready to serve"), 400: errorResponses[400], 503: errorResponses[503] },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(healthz, (c) => {
    // Which process answered: with API_PROCESSES above 1, several share the port.
    c.header("x-process-id", String(process.pid));
    return c.json({ status: "ok" as const, time: c.get("deps").ledger.db.clock.now().toISOString() }, 200);
  });
  app.openapi(readyz, async (c) => {
    const db = c.get("deps").ledger.db;
    const ping = await databaseReachable(db);
    if (!ping.reachable) {
      c.get("deps").log.warn({ request_id: c.get("requestId"), err: String(ping.error) }, "readiness: the database is unreachable");
      throw new ApiError("unavailable", "the database is unreachable", [], { "retry-after": "1" });
    }
    const pending = await pendingMigrations(db);
    if (pending > 0) throw new ApiError("unavailable", `${pending} database migrations are not applied yet`, [], { "retry-after": "5" });
    return c.json({ status: "ok" as const, time: db.clock.now().toISOString() }, 200);
  });
  app.get("/metrics", async (c) => {
    const registry = c.get("deps").metrics.registry;
    return c.body(await registry.metrics(), 200, { "content-type": registry.contentType });
  });
}
