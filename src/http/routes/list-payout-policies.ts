import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { listPayoutPolicies } from "../../services/payout-policies.js";
import { getAssetScales } from "../../services/reads.js";
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
  app.openapi(route, async (c) => {
    const db = c.get("deps").ledger.db;
    const policies = await listPayoutPolicies(db);
    const scales = await getAssetScales(
      db,
      policies.map((p) => p.assetId),
    );
    return c.json({ data: policies.map((p) => policyOut(p, scales.get(p.assetId)!)) }, 200);
  });
}
