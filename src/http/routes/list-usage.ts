import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { getAssetScales, listUsage } from "../../services/reads.js";
import type { AppEnv } from "../request-context.js";
import { periodQuery } from "../period.js";
import { CursorQuery, page } from "../schemas.js";
import { UsageRecordOut, usageOut } from "../usage-schemas.js";
import { errorResponses, json, listWindow, security } from "./common.js";
import { CustomerId, MarketplaceId, OperatorId } from "./party-schemas.js";

const Query = CursorQuery.extend({
  marketplace_id: MarketplaceId.optional(),
  operator_id: OperatorId.optional(),
  customer_id: CustomerId.optional(),
  resource: z.string().max(100).optional(),
  ...periodQuery({ optional: true, from: "effective_at at or after", to: "effective_at before" }),
});

const route = createRoute({
  method: "get",
  path: "/v1/usage",
  operationId: "listUsage",
  tags: ["usage"],
  summary: "List usage records, filtered (marketplace keys see theirs, operator keys their own)",
  security,
  request: { query: Query },
  responses: { 200: json(page(UsageRecordOut, "UsagePage"), "a page of records, oldest first"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const { from, to } = listWindow(q);
    const p = c.get("principal");
    const db = c.get("deps").ledger.db;
    // A scoped key's own tenant is forced; naming another tenant simply finds nothing.
    const marketplaceId = p.role === "marketplace" ? p.scopeId! : q.marketplace_id;
    const operatorId = p.role === "operator" ? p.scopeId! : q.operator_id;
    const scopedAway =
      (p.role === "marketplace" && q.marketplace_id !== undefined && q.marketplace_id !== p.scopeId) ||
      (p.role === "operator" && q.operator_id !== undefined && q.operator_id !== p.scopeId);
    const records = scopedAway
      ? []
      : await listUsage(db, {
          marketplaceId,
          operatorId,
          customerId: q.customer_id,
          resource: q.resource,
          from,
          to,
          after: q.cursor,
          limit: q.limit + 1,
        });
    const items = records.slice(0, q.limit);
    const scales = await getAssetScales(
      db,
      items.map((r) => r.assetId),
    );
    return c.json(
      {
        data: items.map((r) => usageOut(r, scales.get(r.assetId)!)),
        next_cursor: records.length > q.limit ? items[items.length - 1]!.id : null,
        limit: q.limit,
      },
      200,
    );
  });
}
