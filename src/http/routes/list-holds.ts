import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { listHolds } from "../../services/holds.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { ApiError } from "../problem.js";
import { isUuid } from "../../domain/ids.js";
import { AssetCode } from "../money-schemas.js";
import { CursorQuery, page, pageOf } from "../schemas.js";
import { assetFilter, errorResponses, json, security } from "./common.js";
import { HoldOut, holdOut } from "./hold-schemas.js";
import { CustomerId, MarketplaceId } from "./party-schemas.js";

const Query = CursorQuery.extend({
  marketplace_id: MarketplaceId.optional().openapi({ description: "only this marketplace's holds (a marketplace key sees its own whatever it names)" }),
  customer_id: CustomerId.optional().openapi({ description: "only this customer's holds" }),
  status: z.enum(["open", "closed", "expired"]).optional(),
  asset: AssetCode.optional(),
});

const route = createRoute({
  method: "get",
  path: "/v1/holds",
  operationId: "listHolds",
  tags: ["usage"],
  summary: "List holds by id, filtered by marketplace, customer, status and asset (admin, finance; a marketplace key sees its own)",
  security,
  middleware: [requireRole("admin", "finance", "marketplace")] as const,
  request: { query: Query },
  responses: { 200: json(page(HoldOut, "HoldPage"), "a page of holds, by id"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const p = c.get("principal");
    if (q.cursor !== undefined && !isUuid(q.cursor))
      throw new ApiError("invalid_request", "cursor is not one this API returned", [{ path: "cursor", message: "invalid" }]);
    const db = c.get("deps").ledger.db;
    // A marketplace key's own marketplace is forced; naming another simply finds nothing.
    const scopedAway = p.role === "marketplace" && q.marketplace_id !== undefined && q.marketplace_id !== p.scopeId;
    const rows = scopedAway
      ? []
      : await listHolds(db, {
          marketplaceId: p.role === "marketplace" ? p.scopeId! : q.marketplace_id,
          customerId: q.customer_id,
          status: q.status,
          assetId: await assetFilter(db, q.asset),
          afterId: q.cursor,
          limit: q.limit + 1,
        });
    return c.json(
      pageOf(rows, q.limit, holdOut, (h) => h.id),
      200,
    );
  });
}
