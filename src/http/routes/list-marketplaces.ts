import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { withPricing } from "../../services/marketplace-pricing.js";
import { listMarketplaces } from "../../services/party-reads.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { CursorQuery, page, pageOf } from "../schemas.js";
import { errorResponses, json, security } from "./common.js";
import { partyCursor } from "./party-access.js";
import { Marketplace, marketplaceOut } from "./party-schemas.js";

const route = createRoute({
  method: "get",
  path: "/v1/marketplaces",
  operationId: "listMarketplaces",
  tags: ["usage"],
  summary: "List marketplaces, by id (admin, finance; a marketplace key sees its own)",
  security,
  middleware: [requireRole("admin", "finance", "marketplace")] as const,
  request: { query: CursorQuery },
  responses: { 200: json(page(Marketplace, "MarketplacePage"), "a page of marketplaces, by id"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const p = c.get("principal");
    const db = c.get("deps").ledger.db;
    const rows = await listMarketplaces(db, {
      id: p.role === "marketplace" ? p.scopeId! : undefined,
      after: partyCursor(q.cursor),
      limit: q.limit + 1,
    });
    return c.json(
      pageOf(await withPricing(db, rows), q.limit, marketplaceOut, (r) => r.id),
      200,
    );
  });
}
