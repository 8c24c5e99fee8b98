import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { listCustomers } from "../../services/party-reads.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { CursorQuery, page } from "../schemas.js";
import { errorResponses, json, security } from "./common.js";
import { customerCursor } from "./party-access.js";
import { Customer, customerOut, MarketplaceId } from "./party-schemas.js";

const Query = CursorQuery.extend({
  marketplace_id: MarketplaceId.optional().openapi({ description: "only this marketplace's customers (a marketplace key sees its own whatever it names)" }),
});

const route = createRoute({
  method: "get",
  path: "/v1/customers",
  operationId: "listCustomers",
  tags: ["usage"],
  summary: "List customers, by marketplace and id (admin, finance; a marketplace key sees its own)",
  security,
  middleware: [requireRole("admin", "finance", "marketplace")] as const,
  request: { query: Query },
  responses: { 200: json(page(Customer, "CustomerPage"), "a page of customers, by marketplace and id"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const p = c.get("principal");
    const after = customerCursor(q.cursor);
    // A marketplace key's own marketplace is forced; naming another simply finds nothing.
    const scopedAway = p.role === "marketplace" && q.marketplace_id !== undefined && q.marketplace_id !== p.scopeId;
    const rows = scopedAway
      ? []
      : await listCustomers(c.get("deps").ledger.db, {
          marketplaceId: p.role === "marketplace" ? p.scopeId! : q.marketplace_id,
          after,
          limit: q.limit + 1,
        });
    const items = rows.slice(0, q.limit);
    const last = items[items.length - 1];
    return c.json({ data: items.map(customerOut), next_cursor: rows.length > q.limit ? `${last!.marketplaceId}/${last!.id}` : null, limit: q.limit }, 200);
  });
}
