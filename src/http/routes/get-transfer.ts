import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../request-context.js";
import { IdParam, Transfer } from "../schemas.js";
import { transferOut } from "../serialize.js";
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
  app.openapi(route, async (c) => c.json(transferOut(await visibleTransfer(c, c.req.valid("param").id)), 200));
}
