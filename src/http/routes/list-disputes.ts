import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { DISPUTE_STATUSES } from "../../domain/disputes.js";
import { getDispute, listDisputes } from "../../services/disputes.js";
import { requireRole } from "../auth.js";
import { ApiError } from "../problem.js";
import type { AppEnv } from "../request-context.js";
import { CursorQuery, IdParam, page, pageOf } from "../schemas.js";
import { errorResponses, json, listWindow, security } from "./common.js";
import { DisputeOut, disputeOut } from "./dispute-schemas.js";
import { MarketplaceId } from "./party-schemas.js";

const Query = CursorQuery.extend({
  status: z.enum(DISPUTE_STATUSES).optional(),
  marketplace_id: MarketplaceId.optional(),
});

const list = createRoute({
  method: "get",
  path: "/v1/disputes",
  operationId: "listDisputes",
  tags: ["disputes"],
  summary: "List disputes, oldest first (admin, finance; a marketplace its own; an operator those of its usage, with only its records)",
  security,
  middleware: [requireRole("admin", "finance", "marketplace", "operator")] as const,
  request: { query: Query },
  responses: { 200: json(page(DisputeOut, "DisputePage"), "a page of disputes"), ...errorResponses },
});

const get = createRoute({
  method: "get",
  path: "/v1/disputes/{id}",
  operationId: "getDispute",
  tags: ["disputes"],
  summary: "A dispute (admin, finance, its marketplace, an operator whose usage it disputes)",
  security,
  middleware: [requireRole("admin", "finance", "marketplace", "operator")] as const,
  request: { params: IdParam },
  responses: { 200: json(DisputeOut, "the dispute"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(list, async (c) => {
    const q = c.req.valid("query");
    listWindow(q);
    const rows = await listDisputes(c.get("deps").ledger.db, c.get("principal"), {
      status: q.status,
      marketplaceId: q.marketplace_id,
      afterId: q.cursor,
      limit: q.limit + 1,
    });
    return c.json(
      pageOf(rows, q.limit, disputeOut, (d) => d.id),
      200,
    );
  });
  app.openapi(get, async (c) => {
    const { id } = c.req.valid("param");
    const d = await getDispute(c.get("deps").ledger.db, id, c.get("principal"));
    if (!d) throw new ApiError("dispute_not_found", `dispute ${id} does not exist`);
    return c.json(disputeOut(d), 200);
  });
}
