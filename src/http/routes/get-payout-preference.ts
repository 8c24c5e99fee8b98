import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { preferenceHistory } from "../../services/payout-preferences.js";
import { getAssetByCode } from "../../services/reads.js";
import { requireRole } from "../auth.js";
import { AssetCode } from "../money-schemas.js";
import { ApiError } from "../problem.js";
import type { AppEnv } from "../request-context.js";
import { errorResponses, json, security } from "./common.js";
import { PayoutPreferenceOut, preferenceOut } from "./conversion-schemas.js";
import { visibleOperator } from "./operator-access.js";
import { OperatorId } from "./party-schemas.js";

const route = createRoute({
  method: "get",
  path: "/v1/operators/{id}/payout-preferences/{asset}",
  operationId: "getPayoutPreference",
  tags: ["payouts"],
  summary: "The assets the operator's earnings in an asset are paid in, with every earlier version (the operator, admin, finance)",
  description: "A 404 (not_found) when the operator never set one: its earnings in the asset are paid in the asset itself.",
  security,
  middleware: [requireRole("admin", "finance", "operator")] as const,
  request: { params: z.object({ id: OperatorId, asset: AssetCode }) },
  responses: { 200: json(PayoutPreferenceOut, "the preference in force, with its history"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id, asset: code } = c.req.valid("param");
    await visibleOperator(c, id);
    const db = c.get("deps").ledger.db;
    const asset = await getAssetByCode(db, code);
    if (!asset) throw new ApiError("asset_not_found", `asset ${code} does not exist`);
    const history = await preferenceHistory(db, id, asset.id);
    if (history.length === 0) {
      throw new ApiError("not_found", `operator ${id} has set no payout preference for ${code}: its earnings in ${code} are paid in ${code} itself`);
    }
    return c.json(preferenceOut(history), 200);
  });
}
