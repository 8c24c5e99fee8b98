import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { itemStatuses } from "../../domain/reconcile.js";
import { getReconciliation, listItems } from "../../services/reconcile.js";
import { getAssetScales } from "../../services/reads.js";
import { requireRole } from "../auth.js";
import { csvResponse } from "../csv.js";
import type { AppEnv } from "../request-context.js";
import { ApiError } from "../problem.js";
import { CursorQuery, IdParam } from "../schemas.js";
import { errorResponses, security } from "./common.js";
import { itemColumns, ItemView, itemView, ReconciliationOut, runOut } from "./reconciliation-schemas.js";
import { Format, reportResponse } from "./report-schemas.js";

const Out = ReconciliationOut.extend({ items: z.array(ItemView), next_cursor: z.string().nullable(), limit: z.number().int() }).openapi(
  "ReconciliationWithItems",
);

const route = createRoute({
  method: "get",
  path: "/v1/reconciliations/{id}",
  operationId: "getReconciliation",
  tags: ["reconciliation"],
  summary: "A reconciliation run with its items, filtered by status; CSV with format=csv (admin, finance)",
  security,
  middleware: [requireRole("admin", "finance")] as const,
  request: { params: IdParam, query: CursorQuery.extend({ status: z.enum(itemStatuses).optional(), format: Format }) },
  responses: { 200: reportResponse(Out, "the run and a page of its items (CSV: all of them)"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const q = c.req.valid("query");
    const db = c.get("deps").ledger.db;
    const run = await getReconciliation(db, id);
    if (!run) throw new ApiError("reconciliation_not_found", `reconciliation ${id} does not exist`);
    if (q.cursor !== undefined && !/^[0-9]{1,18}$/.test(q.cursor))
      throw new ApiError("invalid_request", "cursor is not one this API returned", [{ path: "cursor", message: "invalid" }]);
    const scale = (await getAssetScales(db, [run.assetId])).get(run.assetId)!;
    if (q.format === "csv") {
      const items = await listItems(db, id, { status: q.status, limit: 1_000_000 });
      return csvResponse(
        c,
        `reconciliation-${id}.csv`,
        [...itemColumns],
        items.map((i) => {
          const o = itemView(i, scale);
          return itemColumns.map((k) => o[k]);
        }),
      ) as never;
    }
    const items = await listItems(db, id, { status: q.status, after: q.cursor === undefined ? undefined : BigInt(q.cursor), limit: q.limit + 1 });
    const page = items.slice(0, q.limit);
    return c.json(
      { ...runOut(run), items: page.map((i) => itemView(i, scale)), next_cursor: items.length > q.limit ? page[page.length - 1]!.id : null, limit: q.limit },
      200,
    );
  });
}
