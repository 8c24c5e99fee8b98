import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { listRateLocks } from "../../services/conversion-reads.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { CursorQuery, page, pageOf } from "../schemas.js";
import { errorResponses, json, security } from "./common.js";
import { OperatorId } from "./party-schemas.js";
import { RateLockOut, rateLockOut } from "./rate-lock-schemas.js";
import { decodeTimeCursor, encodeTimeCursor } from "./time-cursor.js";

const Query = CursorQuery.extend({ operator_id: OperatorId.optional() });

const route = createRoute({
  method: "get",
  path: "/v1/rate-locks",
  operationId: "listRateLocks",
  tags: ["payouts"],
  summary:
    "List the rates locked for operators' earnings of marketplaces that lock the rate at earning, oldest first, with what payouts used of each (admin, finance; operator keys see their own)",
  security,
  middleware: [requireRole("admin", "finance", "operator")] as const,
  request: { query: Query },
  responses: { 200: json(page(RateLockOut, "RateLockPage"), "a page of rate locks, oldest first"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const after = decodeTimeCursor("l", q.cursor);
    const p = c.get("principal");
    // An operator key sees its own locks; naming another operator finds nothing, as GET /v1/conversions does.
    const scopedAway = p.role === "operator" && q.operator_id !== undefined && q.operator_id !== p.scopeId;
    const rows = scopedAway
      ? []
      : await listRateLocks(c.get("deps").ledger.db, { operatorId: p.role === "operator" ? p.scopeId! : q.operator_id, after, limit: q.limit + 1 });
    return c.json(
      pageOf(rows, q.limit, rateLockOut, (r) => encodeTimeCursor("l", r.locked_at, r.id)),
      200,
    );
  });
}
