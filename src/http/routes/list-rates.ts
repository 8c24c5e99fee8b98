import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { listRates } from "../../services/conversion-reads.js";
import { requireRole } from "../auth.js";
import { AssetCode } from "../money-schemas.js";
import type { AppEnv } from "../request-context.js";
import { CursorQuery, page, pageOf } from "../schemas.js";
import { assetFilter, errorResponses, json, security } from "./common.js";
import { RateOut, rateOut } from "./conversion-schemas.js";
import { decodeTimeCursor, encodeTimeCursor } from "./time-cursor.js";

const Query = CursorQuery.extend({ asset: AssetCode.optional().openapi({ description: "rates with this asset on either side" }) });

const route = createRoute({
  method: "get",
  path: "/v1/rates",
  operationId: "listRates",
  tags: ["payouts"],
  summary: "List the exchange rates recorded, newest observation first: price feed rounds read and approved manual rates (any key)",
  security,
  middleware: [requireRole("admin", "finance", "marketplace", "operator")] as const,
  request: { query: Query },
  responses: { 200: json(page(RateOut, "RatePage"), "a page of rates, newest observation first"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const before = decodeTimeCursor("r", q.cursor);
    const db = c.get("deps").ledger.db;
    const rows = await listRates(db, { assetId: await assetFilter(db, q.asset), before, limit: q.limit + 1 });
    return c.json(
      pageOf(rows, q.limit, rateOut, (r) => encodeTimeCursor("r", r.observed_at, r.id)),
      200,
    );
  });
}
