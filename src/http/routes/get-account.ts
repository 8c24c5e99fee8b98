import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../request-context.js";
import { Account, IdParam } from "../schemas.js";
import { accountOut } from "../serialize.js";
import { visibleAccount } from "../visibility.js";
import { errorResponses, json, security } from "./common.js";

const route = createRoute({
  method: "get",
  path: "/v1/accounts/{id}",
  operationId: "getAccount",
  tags: ["ledger"],
  summary: "Read an account",
  security,
  request: { params: IdParam },
  responses: { 200: json(Account, "the account"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => c.json(accountOut(await visibleAccount(c, c.req.valid("param").id)), 200));
}
