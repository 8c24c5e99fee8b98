import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { listFeeSchedules } from "../../services/fee-schedules.js";
import { getMarketplace } from "../../services/marketplaces.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { ApiError } from "../problem.js";
import { canReadMarketplace } from "../tenancy.js";
import { errorResponses, json, security } from "./common.js";
import { FeeSchedule, feeScheduleOut } from "./fee-schedule-schemas.js";
import { MarketplaceId } from "./party-schemas.js";

const route = createRoute({
  method: "get",
  path: "/v1/marketplaces/{id}/fee-schedules",
  operationId: "listFeeSchedules",
  tags: ["usage"],
  summary: "Every version of a marketplace's fee schedule (admin, finance, that marketplace)",
  security,
  middleware: [requireRole("admin", "finance", "marketplace")] as const,
  request: { params: z.object({ id: MarketplaceId }) },
  responses: { 200: json(z.object({ data: z.array(FeeSchedule) }), "versions, oldest first"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const db = c.get("deps").ledger.db;
    if (!canReadMarketplace(c, id) || !(await getMarketplace(db, id))) throw new ApiError("marketplace_not_found", `marketplace ${id} does not exist`);
    return c.json({ data: (await listFeeSchedules(db, id)).map(feeScheduleOut) }, 200);
  });
}
