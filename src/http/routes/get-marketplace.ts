import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { withPricing } from "../../services/marketplace-pricing.js";
import { listMarketplaces } from "../../services/party-reads.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { ApiError } from "../problem.js";
import { canReadMarketplace } from "../tenancy.js";
import { errorResponses, json, security } from "./common.js";
import { Marketplace, MarketplaceId, marketplaceOut } from "./party-schemas.js";

const route = createRoute({
  method: "get",
  path: "/v1/marketplaces/{id}",
  operationId: "getMarketplace",
  tags: ["usage"],
  summary: "Read a marketplace (admin, finance, that marketplace)",
  security,
  middleware: [requireRole("admin", "finance", "marketplace")] as const,
  request: { params: z.object({ id: MarketplaceId }) },
  responses: { 200: json(Marketplace, "the marketplace"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    // Another marketplace is answered as a missing one, without reading it.
    const db = c.get("deps").ledger.db;
    const [m] = canReadMarketplace(c, id) ? await withPricing(db, await listMarketplaces(db, { id, limit: 1 })) : [];
    if (!m) throw new ApiError("marketplace_not_found", `marketplace ${id} does not exist`);
    return c.json(marketplaceOut(m), 200);
  });
}
