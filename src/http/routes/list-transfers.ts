import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { accountScope } from "../../domain/access.js";
import { decodeTransferCursor, listTransfers } from "../../services/reads.js";
import { AssetCode } from "../money-schemas.js";
import { checkPeriod, periodQuery } from "../period.js";
import { ApiError } from "../problem.js";
import type { AppEnv } from "../request-context.js";
import { CursorQuery, page, Transfer, Uuid } from "../schemas.js";
import { assetScales } from "../scales.js";
import { legAssets, transferOut } from "../serialize.js";
import { visibleAccount } from "../visibility.js";
import { assetFilter, errorResponses, json, security } from "./common.js";

const Query = CursorQuery.extend({
  account_id: Uuid.optional().openapi({ description: "only transfers with a leg on this account (one the key may read)" }),
  asset: AssetCode.optional().openapi({ description: "only transfers with a leg in this asset (its code)" }),
  status: Transfer.shape.status.optional(),
  ...periodQuery({ optional: true, from: "effective_at at or after", to: "effective_at before" }),
});

const route = createRoute({
  method: "get",
  path: "/v1/transfers",
  operationId: "listTransfers",
  tags: ["ledger"],
  summary: "List transfers, newest first, filtered (admin, finance; a marketplace or operator key: those touching its accounts)",
  description:
    "The transfers a key may read by id (GET /v1/transfers/{id}): those with a leg on an account it may read, and no other. " +
    "Newest recorded first; a walk through the pages sees every transfer recorded before it began, once.",
  security,
  request: { query: Query },
  responses: { 200: json(page(Transfer, "TransferPage"), "a page of transfers, newest recorded first"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    if (q.cursor !== undefined && decodeTransferCursor(q.cursor) === undefined) {
      throw new ApiError("invalid_request", "cursor is not one this API returned", [{ path: "cursor", message: "invalid" }]);
    }
    const { from, to } = checkPeriod(q);
    const db = c.get("deps").ledger.db;
    // Another tenant's account answers as a missing one, as its read by id does.
    if (q.account_id !== undefined) await visibleAccount(c, q.account_id);
    const p = await listTransfers(db, {
      scope: accountScope(c.get("principal")),
      accountId: q.account_id,
      assetId: await assetFilter(db, q.asset),
      status: q.status,
      from,
      to,
      cursor: q.cursor,
      limit: q.limit,
    });
    const scales = await assetScales(db, legAssets(p.items));
    return c.json({ data: p.items.map((t) => transferOut(t, scales)), next_cursor: p.nextCursor, limit: q.limit }, 200);
  });
}
