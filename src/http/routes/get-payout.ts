import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { IdParam } from "../schemas.js";
import { errorResponses, json, security } from "./common.js";
import { visiblePayout } from "./payout-access.js";
import { PayoutOut, payoutOut } from "./payout-schemas.js";

const route = createRoute({
  method: "get",
  path: "/v1/payouts/{id}",
  operationId: "getPayout",
  tags: ["payouts"],
  summary: "Read a payout (admin, finance, its operator)",
  security,
  middleware: [requireRole("admin", "finance", "operator")] as const,
  request: { params: IdParam },
  responses: { 200: json(PayoutOut, "the payout"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => c.json(payoutOut(await visiblePayout(c, c.req.valid("param").id)), 200));
}
