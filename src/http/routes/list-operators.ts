import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { listOperators } from "../../services/party-reads.js";
import type { AppEnv } from "../request-context.js";
import { CursorQuery, page } from "../schemas.js";
import { errorResponses, json, security } from "./common.js";
import { operatorScope, partyCursor, visibleMarketplaceIds } from "./party-access.js";
import { Operator, partyOut } from "./party-schemas.js";

const route = createRoute({
  method: "get",
  path: "/v1/operators",
  operationId: "listOperators",
  tags: ["usage"],
  summary: "List operators, by id (admin, finance; a marketplace key: those linked to it; an operator key: itself)",
  description: "A marketplace key sees only its own id among an operator's marketplace_ids.",
  security,
  request: { query: CursorQuery },
  responses: { 200: json(page(Operator, "OperatorPage"), "a page of operators, by id"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const p = c.get("principal");
    const rows = await listOperators(c.get("deps").ledger.db, { ...operatorScope(p), after: partyCursor(q.cursor), limit: q.limit + 1 });
    const items = rows.slice(0, q.limit);
    return c.json(
      {
        data: items.map((o) => ({ ...partyOut(o), marketplace_ids: visibleMarketplaceIds(p, o.marketplaceIds) })),
        next_cursor: rows.length > q.limit ? items[items.length - 1]!.id : null,
        limit: q.limit,
      },
      200,
    );
  });
}
