import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { getAssetScales, getBalance, getBalanceAsOf } from "../../services/reads.js";
import type { AppEnv } from "../request-context.js";
import { Balance, IdParam, Timestamp } from "../schemas.js";
import { balanceOut } from "../serialize.js";
import { visibleAccount } from "../visibility.js";
import { errorResponses, json, security } from "./common.js";
import { readModel } from "../read-source.js";

const route = createRoute({
  method: "get",
  path: "/v1/accounts/{id}/balance",
  operationId: "getAccountBalance",
  tags: ["ledger"],
  summary: "An account's balances, now or as of an instant",
  security,
  request: {
    params: IdParam,
    query: z.strictObject({ as_of: Timestamp.optional().openapi({ description: "effective instant; entries dated at or before it count" }) }),
  },
  responses: { 200: json(Balance, "posted, pending and available balances"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const { as_of } = c.req.valid("query");
    const account = await visibleAccount(c, id);
    const asOf = as_of === undefined ? null : new Date(as_of);
    const [balance, scales] = await readModel(
      c,
      async (db) => {
        const found = await Promise.all([asOf ? getBalanceAsOf(db, id, asOf) : getBalance(db, id), getAssetScales(db, [account.assetId])]);
        if (!found[0]) throw new Error(`account ${id} has no balance row`);
        return found;
      },
      { pointRead: true },
    );
    return c.json(balanceOut(balance!, asOf, scales.get(account.assetId)!), 200);
  });
}
