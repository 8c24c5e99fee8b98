import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { decodeCursor, getAssetScales, listEntries } from "../../services/reads.js";
import type { AppEnv } from "../request-context.js";
import { ApiError } from "../problem.js";
import { CursorQuery, Entry, IdParam, page } from "../schemas.js";
import { entryOut } from "../serialize.js";
import { visibleAccount } from "../visibility.js";
import { errorResponses, json, security } from "./common.js";

const route = createRoute({
  method: "get",
  path: "/v1/accounts/{id}/entries",
  operationId: "listAccountEntries",
  tags: ["ledger"],
  summary: "An account's entries with running balance",
  security,
  request: { params: IdParam, query: CursorQuery.extend({ order: z.enum(["asc", "desc"]).default("asc") }) },
  responses: { 200: json(page(Entry, "EntryPage"), "a page of entries in recording order"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const { cursor, limit, order } = c.req.valid("query");
    if (cursor !== undefined && decodeCursor(cursor) === undefined) {
      throw new ApiError("invalid_request", "cursor is not one this API returned", [{ path: "cursor", message: "invalid" }]);
    }
    const account = await visibleAccount(c, id);
    const db = c.get("deps").ledger.db;
    const p = await listEntries(db, id, { cursor, limit, order });
    const scale = (await getAssetScales(db, [account.assetId])).get(account.assetId)!;
    return c.json({ data: p.items.map((e) => entryOut(e, scale)), next_cursor: p.nextCursor, limit }, 200);
  });
}
