import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { getHold } from "../../services/holds.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { ApiError } from "../problem.js";
import { IdParam } from "../schemas.js";
import { canReadMarketplace } from "../tenancy.js";
import { errorResponses, json, security } from "./common.js";
import { HoldOut, holdOut } from "./hold-schemas.js";

const route = createRoute({
  method: "get",
  path: "/v1/holds/{id}",
  operationId: "getHold",
  tags: ["usage"],
  summary: "Read a hold and what is left of it (admin, finance, its marketplace)",
  security,
  middleware: [requireRole("admin", "finance", "marketplace")] as const,
  request: { params: IdParam },
  responses: { 200: json(HoldOut, "the hold"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const hold = await getHold(c.get("deps").ledger.db, id);
    if (!hold || !canReadMarketplace(c, hold.marketplaceId)) throw new ApiError("hold_not_found", `hold ${id} does not exist`);
    return c.json(holdOut(hold), 200);
  });
}
