import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { createBalanceMonitor, deleteBalanceMonitor, listBalanceMonitors, visibleBalanceMonitor } from "../../services/balance-monitors.js";
import { isUuid } from "../../domain/ids.js";
import { requireRole } from "../auth.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { ApiError } from "../problem.js";
import type { AppEnv } from "../request-context.js";
import { CursorQuery, IdParam, page, pageOf, Uuid } from "../schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, NoBody, security } from "./common.js";
import { BalanceMonitor, BalanceMonitorCreate, balanceMonitorOut } from "./event-schemas.js";

const roles = ["admin", "finance", "marketplace", "operator"] as const;
const base = { tags: ["events"], security };

const create = createRoute({
  ...base,
  method: "post",
  path: "/v1/balance-monitors",
  operationId: "createBalanceMonitor",
  summary: "Watch a balance the key may read: one event when it crosses a threshold, one when it comes back (with hysteresis)",
  middleware: [requireRole(...roles), jsonBodyGuard] as const,
  request: { headers: IdempotencyHeader, body: jsonBody(BalanceMonitorCreate) },
  responses: { 201: json(BalanceMonitor, "the monitor"), ...errorResponses },
});

const list = createRoute({
  ...base,
  method: "get",
  path: "/v1/balance-monitors",
  operationId: "listBalanceMonitors",
  summary: "List balance monitors (each key its tenant's; finance and admin all)",
  middleware: [requireRole(...roles)] as const,
  request: { query: CursorQuery.extend({ account_id: Uuid.optional() }) },
  responses: { 200: json(page(BalanceMonitor, "BalanceMonitorPage"), "a page of monitors by id"), ...errorResponses },
});

const get = createRoute({
  ...base,
  method: "get",
  path: "/v1/balance-monitors/{id}",
  operationId: "getBalanceMonitor",
  summary: "A balance monitor and its state",
  middleware: [requireRole(...roles)] as const,
  request: { params: IdParam },
  responses: { 200: json(BalanceMonitor, "the monitor"), ...errorResponses },
});

const del = createRoute({
  ...base,
  method: "delete",
  path: "/v1/balance-monitors/{id}",
  operationId: "deleteBalanceMonitor",
  summary: "Stop watching: the monitor is deleted and fires no more",
  middleware: [requireRole(...roles), jsonBodyGuard] as const,
  request: { params: IdParam, body: NoBody },
  responses: { 200: json(BalanceMonitor, "the monitor, deleted"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(create, async (c) => {
    const body = c.req.valid("json");
    const now = c.get("deps").ledger.db.clock.now();
    return idempotently(c, body, async (tx) => {
      const m = await createBalanceMonitor(tx, {
        principal: c.get("principal"),
        accountId: body.account_id,
        direction: body.direction,
        balance: body.balance ?? "available",
        threshold: BigInt(body.threshold),
        hysteresis: BigInt(body.hysteresis ?? "0"),
        now,
      });
      return { status: 201, body: balanceMonitorOut(m) };
    }) as never;
  });
  app.openapi(list, async (c) => {
    const q = c.req.valid("query");
    if (q.cursor !== undefined && !isUuid(q.cursor))
      throw new ApiError("invalid_request", "cursor is not one this API returned", [{ path: "cursor", message: "invalid" }]);
    const rows = await listBalanceMonitors(c.get("deps").ledger.db, c.get("principal"), { accountId: q.account_id, afterId: q.cursor, limit: q.limit + 1 });
    return c.json(
      pageOf(rows, q.limit, balanceMonitorOut, (r) => r.id),
      200,
    );
  });
  app.openapi(get, async (c) => {
    const m = await visibleBalanceMonitor(c.get("deps").ledger.db, c.get("principal"), c.req.valid("param").id);
    return c.json(balanceMonitorOut(m), 200);
  });
  app.openapi(del, async (c) => {
    const { id } = c.req.valid("param");
    return idempotently(c, {}, async (tx) => ({ status: 200, body: balanceMonitorOut(await deleteBalanceMonitor(tx, c.get("principal"), id)) })) as never;
  });
}
