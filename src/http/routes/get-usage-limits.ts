import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { getUsageLimits } from "../../services/usage-limits.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { ApiError } from "../problem.js";
import { canReadMarketplace } from "../tenancy.js";
import { AssetCode } from "../money-schemas.js";
import { errorResponses, json, security } from "./common.js";
import { MarketplaceId } from "./party-schemas.js";
import { UsageLimitsOut, usageLimitsOut } from "./usage-limit-schemas.js";

const route = createRoute({
  method: "get",
  path: "/v1/marketplaces/{id}/usage-limits/{asset}",
  operationId: "getUsageLimits",
  tags: ["usage"],
  summary: "What one usage record of the marketplace may claim in an asset (admin, finance, that marketplace)",
  security,
  middleware: [requireRole("admin", "finance", "marketplace")] as const,
  request: { params: z.object({ id: MarketplaceId, asset: AssetCode }) },
  responses: { 200: json(UsageLimitsOut, "the limits in force"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id, asset } = c.req.valid("param");
    if (!canReadMarketplace(c, id)) throw new ApiError("marketplace_not_found", `marketplace ${id} does not exist`);
    return c.json(usageLimitsOut(await getUsageLimits(c.get("deps").ledger.db, id, asset)), 200);
  });
}
