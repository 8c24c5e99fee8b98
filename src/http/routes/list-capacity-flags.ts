import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { unitHours } from "../../domain/capacity.js";
import { isUuid } from "../../domain/ids.js";
import { listCapacityFlags } from "../../services/capacity.js";
import { getMarketplace } from "../../services/marketplaces.js";
import { requireRole } from "../auth.js";
import { ApiError } from "../problem.js";
import type { AppEnv } from "../request-context.js";
import { CursorQuery, page, pageOf } from "../schemas.js";
import { canReadMarketplace } from "../tenancy.js";
import { errorResponses, json, security } from "./common.js";
import { MarketplaceId } from "./party-schemas.js";

const Flag = z
  .object({
    usage_id: z.string(),
    external_id: z.string(),
    operator_id: z.string(),
    resource: z.string(),
    capacity_unit_hours: z
      .string()
      .openapi({ description: "the operator's declared capacity over the record's period, in unit-hours (6 decimals, rounded down)" }),
    used_unit_hours: z.string().openapi({ description: "what its other usage (every marketplace) already held of it when the record was posted" }),
    claimed_unit_hours: z.string().openapi({ description: "what the record claimed" }),
    flagged_at: z.string(),
  })
  .openapi("CapacityFlag");

const cursorOf = (r: { created_at: Date | string; usage_id: string }) =>
  Buffer.from(`f:${new Date(r.created_at).toISOString()}|${r.usage_id}`).toString("base64url");

function decodeCursor(cursor: string | undefined): { at: string; id: string } | undefined {
  if (cursor === undefined) return undefined;
  const m = /^f:(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)\|([0-9a-f-]{36})$/.exec(Buffer.from(cursor, "base64url").toString());
  // A date that reads back as itself (no month 13), in the years the API accepts, and a uuid.
  const at = m ? new Date(m[1]!) : undefined;
  const real = at !== undefined && !Number.isNaN(at.getTime()) && at.toISOString() === m![1] && at.getUTCFullYear() >= 1970 && at.getUTCFullYear() <= 9999;
  if (!m || !real || !isUuid(m[2]!)) throw new ApiError("invalid_request", "cursor is not one this API returned", [{ path: "cursor", message: "invalid" }]);
  return { at: m[1]!, id: m[2]! };
}

const route = createRoute({
  method: "get",
  path: "/v1/marketplaces/{id}/capacity-flags",
  operationId: "listCapacityFlags",
  tags: ["usage"],
  summary: "A marketplace's usage records accepted beyond their operator's capacity, for review (admin, finance, the marketplace)",
  security,
  middleware: [requireRole("admin", "finance", "marketplace")] as const,
  request: { params: z.object({ id: MarketplaceId }), query: CursorQuery },
  responses: { 200: json(page(Flag, "CapacityFlagPage"), "flagged records, newest first"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const q = c.req.valid("query");
    const db = c.get("deps").ledger.db;
    if (!canReadMarketplace(c, id) || !(await getMarketplace(db, id))) throw new ApiError("marketplace_not_found", `marketplace ${id} does not exist`);
    const rows = await listCapacityFlags(db, id, q.limit, decodeCursor(q.cursor));
    return c.json(
      pageOf(
        rows,
        q.limit,
        (r) => ({
          usage_id: r.usage_id,
          external_id: r.external_id,
          operator_id: r.operator_id,
          resource: r.resource,
          capacity_unit_hours: unitHours(BigInt(r.capacity_unit_ms)),
          used_unit_hours: unitHours(BigInt(r.used_unit_ms)),
          claimed_unit_hours: unitHours(BigInt(r.claimed_unit_ms)),
          flagged_at: new Date(r.created_at).toISOString(),
        }),
        cursorOf,
      ),
      200,
    );
  });
}
