import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../request-context.js";
import { IdParam, Transfer } from "../schemas.js";
import { assetScales } from "../scales.js";
import { legAssets, transferOut } from "../serialize.js";
import { visibleTransfer } from "../visibility.js";
import { errorResponses, json, security } from "./common.js";

const route = createRoute({
  method: "get",
  path: "/v1/transfers/{id}",
  operationId: "getTransfer",
  tags: ["ledger"],
  summary: "Read a transfer and its current status",
  security,
  request: { params: IdParam },
  responses: { 200: json(Transfer, "the transfer"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const transfer = await visibleTransfer(c, c.req.valid("param").id);
    return c.json(transferOut(transfer, await assetScales(c.get("deps").ledger.db, legAssets([transfer]))), 200);
  });
}
