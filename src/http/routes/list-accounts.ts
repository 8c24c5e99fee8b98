import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { accountScope } from "../../domain/access.js";
import { listAccounts } from "../../services/reads.js";
import { AssetCode } from "../money-schemas.js";
import type { AppEnv } from "../request-context.js";
import { Account, CursorQuery, Identifier, page, pageOf } from "../schemas.js";
import { accountOut } from "../serialize.js";
import { assetFilter, errorResponses, json, listWindow, security } from "./common.js";

const Query = CursorQuery.extend({
  asset: AssetCode.optional().openapi({ description: "only accounts of this asset (its code)" }),
  ref: Identifier.optional().openapi({
    description: "only the account(s) with this ref (one per asset and marketplace), e.g. customer:c42 for a customer's balance",
    example: "customer:c42",
  }),
  code: z.string().min(1).max(200).optional().openapi({ description: "only accounts of this type in the chart of accounts", example: "customer_prepaid" }),
  marketplace_id: Identifier.optional().openapi({ description: "only this marketplace's accounts (a marketplace key sees its own whatever it names)" }),
  owner_type: Identifier.optional().openapi({ example: "customer" }),
  owner_id: Identifier.optional().openapi({ example: "c42" }),
});

const route = createRoute({
  method: "get",
  path: "/v1/accounts",
  operationId: "listAccounts",
  tags: ["ledger"],
  summary: "List accounts, by id, filtered (admin, finance; a marketplace key: its marketplace's; an operator key: its own)",
  description: "The accounts a key may read by id (GET /v1/accounts/{id}), and no other; naming another tenant's marketplace or owner finds nothing.",
  security,
  request: { query: Query },
  responses: { 200: json(page(Account, "AccountPage"), "a page of accounts, by id"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    listWindow(q); // the cursor is the id of the last account of the previous page
    const db = c.get("deps").ledger.db;
    const rows = await listAccounts(db, {
      scope: accountScope(c.get("principal")),
      assetId: await assetFilter(db, q.asset),
      ref: q.ref,
      code: q.code,
      marketplaceId: q.marketplace_id,
      ownerType: q.owner_type,
      ownerId: q.owner_id,
      after: q.cursor,
      limit: q.limit + 1,
    });
    return c.json(
      pageOf(rows, q.limit, accountOut, (r) => r.id),
      200,
    );
  });
}
