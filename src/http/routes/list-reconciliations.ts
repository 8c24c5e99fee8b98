import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { listReconciliations } from "../../services/reconcile.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { AssetCode } from "../money-schemas.js";
import { CursorQuery, page, pageOf } from "../schemas.js";
import { assetFilter, errorResponses, json, listWindow, security } from "./common.js";
import { ReconciliationOut, runOut } from "./reconciliation-schemas.js";

const Query = CursorQuery.extend({
  chain_id: z
    .string()
    .regex(/^[1-9][0-9]{0,15}$/, "must be a chain id")
    .optional()
    .openapi({ example: "8453" }),
  asset: AssetCode.optional(),
});

const route = createRoute({
  method: "get",
  path: "/v1/reconciliations",
  operationId: "listReconciliations",
  tags: ["reconciliation"],
  summary: "List reconciliation runs, newest first, filtered by chain and asset (admin, finance)",
  security,
  middleware: [requireRole("admin", "finance")] as const,
  request: { query: Query },
  responses: {
    200: json(page(ReconciliationOut, "ReconciliationPage"), "a page of runs, newest first (their items: GET /v1/reconciliations/{id})"),
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    listWindow(q); // the cursor is a run's id
    const db = c.get("deps").ledger.db;
    const rows = await listReconciliations(db, {
      chainId: q.chain_id === undefined ? undefined : BigInt(q.chain_id),
      assetId: await assetFilter(db, q.asset),
      before: q.cursor,
      limit: q.limit + 1,
    });
    return c.json(
      pageOf(rows, q.limit, runOut, (r) => r.id),
      200,
    );
  });
}
