import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { getAssetScales, getUsage } from "../../services/reads.js";
import type { AppEnv } from "../request-context.js";
import { ApiError } from "../problem.js";
import { IdParam } from "../schemas.js";
import { UsageRecordOut, usageOut } from "../usage-schemas.js";
import { errorResponses, json, security } from "./common.js";

const route = createRoute({
  method: "get",
  path: "/v1/usage/{id}",
  operationId: "getUsage",
  tags: ["usage"],
  summary: "Read a usage record",
  security,
  request: { params: IdParam },
  responses: { 200: json(UsageRecordOut, "the record"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const db = c.get("deps").ledger.db;
    const record = await getUsage(db, id);
    const p = c.get("principal");
    const visible =
      record &&
      (p.role === "admin" ||
        p.role === "finance" ||
        (p.role === "marketplace" && record.marketplaceId === p.scopeId) ||
        (p.role === "operator" && record.operatorId === p.scopeId));
    if (!visible) throw new ApiError("usage_not_found", `usage record ${id} does not exist`);
    const scales = await getAssetScales(db, [record.assetId]);
    return c.json(usageOut(record, scales.get(record.assetId)!), 200);
  });
}
