import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { listPayoutPolicies } from "../../services/payout-policies.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { errorResponses, json, security } from "./common.js";
import { PayoutPolicyOut, policyOut } from "./payout-schemas.js";

const route = createRoute({
  method: "get",
  path: "/v1/payout-policies",
  operationId: "listPayoutPolicies",
  tags: ["payouts"],
  summary: "Every asset's payout policy, defaults included (admin, finance)",
  security,
  middleware: [requireRole("admin", "finance")] as const,
  responses: { 200: json(z.object({ data: z.array(PayoutPolicyOut) }), "policies by asset code"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => c.json({ data: (await listPayoutPolicies(c.get("deps").ledger.db)).map(policyOut) }, 200));
}
