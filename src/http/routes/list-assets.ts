import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { listAssets } from "../../services/reads.js";
import type { AppEnv } from "../request-context.js";
import { ApiError } from "../problem.js";
import { AssetCode } from "../money-schemas.js";
import { Asset, CursorQuery, page, pageOf } from "../schemas.js";
import { assetOut } from "../serialize.js";
import { errorResponses, json, security } from "./common.js";

const route = createRoute({
  method: "get",
  path: "/v1/assets",
  operationId: "listAssets",
  tags: ["ledger"],
  summary: "List assets (any key)",
  security,
  request: { query: CursorQuery },
  responses: { 200: json(page(Asset, "AssetPage"), "a page of assets, by code"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { cursor, limit } = c.req.valid("query");
    if (cursor !== undefined && !AssetCode.safeParse(cursor).success) {
      throw new ApiError("invalid_request", "cursor is not one this API returned", [{ path: "cursor", message: "invalid" }]);
    }
    const assets = await listAssets(c.get("deps").ledger.db, { afterCode: cursor, limit: limit + 1 });
    return c.json(
      pageOf(assets, limit, assetOut, (r) => r.code),
      200,
    );
  });
}
