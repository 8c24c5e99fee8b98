import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { listConversions } from "../../services/conversion-reads.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { CursorQuery, page, pageOf, Uuid } from "../schemas.js";
import { errorResponses, json, security } from "./common.js";
import { ConversionOut, conversionOut } from "./conversion-schemas.js";
import { OperatorId } from "./party-schemas.js";
import { decodeTimeCursor, encodeTimeCursor } from "./time-cursor.js";

const Query = CursorQuery.extend({
  operator_id: OperatorId.optional(),
  payout_id: Uuid.optional().openapi({ description: "the conversions of this convert payout" }),
});

const route = createRoute({
  method: "get",
  path: "/v1/conversions",
  operationId: "listConversions",
  tags: ["payouts"],
  summary:
    "List the conversions of convert payouts into the assets operators are paid in, in the order they were booked (admin, finance; operator keys see their own)",
  security,
  middleware: [requireRole("admin", "finance", "operator")] as const,
  request: { query: Query },
  responses: { 200: json(page(ConversionOut, "ConversionPage"), "a page of conversions, oldest first"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const after = decodeTimeCursor("c", q.cursor);
    const p = c.get("principal");
    // An operator key sees its own conversions; naming another operator finds nothing, as GET /v1/payouts does.
    const scopedAway = p.role === "operator" && q.operator_id !== undefined && q.operator_id !== p.scopeId;
    const rows = scopedAway
      ? []
      : await listConversions(c.get("deps").ledger.db, {
          operatorId: p.role === "operator" ? p.scopeId! : q.operator_id,
          payoutId: q.payout_id,
          after,
          limit: q.limit + 1,
        });
    return c.json(
      pageOf(rows, q.limit, conversionOut, (r) => encodeTimeCursor("c", r.converted_at, r.id)),
      200,
    );
  });
}
