import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { listAuditLog } from "../../services/reads.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { checkPeriod, periodQuery } from "../period.js";
import { ApiError } from "../problem.js";
import { CursorQuery, page, Timestamp } from "../schemas.js";
import { errorResponses, json, security } from "./common.js";

const Entry = z
  .object({
    id: z.string(),
    at: Timestamp,
    key_id: z.string().nullable(),
    role: z.string().nullable(),
    scope_id: z.string().nullable(),
    method: z.string(),
    path: z.string(),
    route: z.string().nullable(),
    status: z.number().int(),
    request_id: z.string().openapi({ description: "the service's id of the request (the x-request-id of its answer)" }),
    client_request_id: z.string().nullable().openapi({ description: "the X-Request-Id the client sent, if any" }),
    idempotency_key: z.string().nullable(),
    body_sha256: z.string().nullable(),
    body_bytes: z.number().int().nullable(),
  })
  .openapi("AuditEntry");

const route = createRoute({
  method: "get",
  path: "/v1/audit/log",
  operationId: "listAuditLog",
  tags: ["audit"],
  summary: "Every mutating API call, and refused requests (401, 403, 413, 429): who, what, when, the outcome (admin, finance)",
  security,
  middleware: [requireRole("admin", "finance")] as const,
  request: { query: CursorQuery.extend({ key_id: z.string().max(100).optional(), ...periodQuery({ optional: true }) }) },
  responses: { 200: json(page(Entry, "AuditPage"), "a page, oldest first"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    if (q.cursor !== undefined && !/^[0-9]{1,18}$/.test(q.cursor))
      throw new ApiError("invalid_request", "cursor is not one this API returned", [{ path: "cursor", message: "invalid" }]);
    const { from, to } = checkPeriod(q);
    const rows = await listAuditLog(c.get("deps").ledger.db, { keyId: q.key_id, from, to, after: q.cursor, limit: q.limit + 1 });
    const items = rows.slice(0, q.limit).map((r) => ({ ...r, at: r.at.toISOString() }));
    return c.json({ data: items, next_cursor: rows.length > q.limit ? items[items.length - 1]!.id : null, limit: q.limit }, 200);
  });
}
