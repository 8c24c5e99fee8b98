import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { getAssetWithHistory } from "../../services/asset-settings.js";
import type { AppEnv } from "../request-context.js";
import { ApiError } from "../problem.js";
import { AssetCode } from "../money-schemas.js";
import { assetOut } from "../serialize.js";
import { AssetWithHistory, settlementVersionOut } from "./asset-schemas.js";
import { errorResponses, json, security } from "./common.js";

const route = createRoute({
  method: "get",
  path: "/v1/assets/{code}",
  operationId: "getAsset",
  tags: ["ledger"],
  summary: "Read an asset: how it settles now, every earlier settlement and when each was in force (any key)",
  security,
  request: { params: z.object({ code: AssetCode }) },
  responses: { 200: json(AssetWithHistory, "the asset and its settlement history"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { code } = c.req.valid("param");
    const found = await getAssetWithHistory(c.get("deps").ledger.db, code);
    if (!found) throw new ApiError("asset_not_found", `asset ${code} does not exist`);
    return c.json({ ...assetOut(found.asset), settlement_history: found.history.map(settlementVersionOut) }, 200);
  });
}
