import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { getUsageBatchRow, listUsageBatchRejections, listUsageBatchRows, type UsageBatchRow } from "../../services/usage-batches.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { display, DisplayAmount } from "../display.js";
import { ApiError } from "../problem.js";
import { codeScale } from "../scales.js";
import type { Database } from "../../services/context.js";
import { CursorQuery, page, pageOf } from "../schemas.js";
import { canReadMarketplace } from "../tenancy.js";
import { errorResponses, json, security } from "./common.js";
import { MarketplaceId } from "./party-schemas.js";
import { decodeTimeCursor, encodeTimeCursor } from "./time-cursor.js";

const BatchId = z
  .string()
  .regex(/^ub_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, "must be a usage batch id (ub_ and a UUID)")
  .openapi({ param: { name: "id", in: "path" }, example: "ub_01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e" });

const BatchOut = z
  .object({
    id: z.string(),
    marketplace_id: z.string(),
    received_at: z.string().openapi({ description: "by the service's clock" }),
    idempotency_key: z.string().nullable().openapi({ description: "the request's Idempotency-Key" }),
    records: z.number().int(),
    accepted: z.number().int(),
    duplicate: z.number().int(),
    rejected: z.number().int(),
    totals: z
      .array(
        z.object({
          asset: z.string(),
          records: z.number().int(),
          gross: z.string().openapi({ description: "in the asset's smallest unit" }),
          gross_display: DisplayAmount,
        }),
      )
      .openapi({ description: "accepted records per asset" }),
  })
  .openapi("UsageBatch");

const RejectionOut = z
  .object({
    index: z.number().int().openapi({ description: "the record's place in the batch's `records`, from 0" }),
    external_id: z.string().nullable(),
    code: z.string().openapi({ description: "the problem's code (docs/problems.md)" }),
    reason: z.string().openapi({ description: "the problem's detail, at most 500 characters" }),
    field: z.string().nullable().openapi({ description: "the first field the problem names" }),
  })
  .openapi("UsageBatchRejection");

/** The scale of each asset code the batches' totals name, for their display twins. */
async function totalScales(db: Database, batches: UsageBatchRow[]): Promise<Map<string, number>> {
  const scales = new Map<string, number>();
  for (const code of new Set(batches.flatMap((b) => b.totals.map((t) => t.asset)))) {
    const byId = await codeScale(db, code);
    const scale = byId && [...byId.values()][0];
    if (scale === undefined) throw new Error(`no scale known for asset ${code}`);
    scales.set(code, scale);
  }
  return scales;
}

const batchOut = (scales: Map<string, number>) => (b: UsageBatchRow) => ({
  id: b.id,
  marketplace_id: b.marketplace_id,
  received_at: new Date(b.received_at).toISOString(),
  idempotency_key: b.idempotency_key,
  records: b.records,
  accepted: b.accepted,
  duplicate: b.duplicate,
  rejected: b.rejected,
  totals: b.totals.map((t) => ({ ...t, gross_display: display(t.gross, scales.get(t.asset)!) })),
});

const ListQuery = CursorQuery.extend({
  marketplace_id: MarketplaceId.optional().openapi({ description: "only this marketplace's batches (a marketplace key sees its own whatever it names)" }),
  has_rejections: z.enum(["true", "false"]).optional().openapi({ description: "true: only batches with refused records; false: only those without" }),
});

const list = createRoute({
  method: "get",
  path: "/v1/usage-batches",
  operationId: "listUsageBatches",
  tags: ["usage"],
  summary: "List usage batches, newest first (admin, finance; a marketplace key sees its own)",
  security,
  middleware: [requireRole("admin", "finance", "marketplace")] as const,
  request: { query: ListQuery },
  responses: { 200: json(page(BatchOut, "UsageBatchPage"), "a page of batches, newest first"), ...errorResponses },
});

const RejectionQuery = CursorQuery.extend({}).openapi({ description: "pages of the batch's rejections" });

const get = createRoute({
  method: "get",
  path: "/v1/usage-batches/{id}",
  operationId: "getUsageBatch",
  tags: ["usage"],
  summary: "Read a usage batch with its refused records and the reasons (admin, finance, its marketplace)",
  description: "The rejections come by their place in the batch, a page at a time (`limit`, default 100; `cursor`: the `rejections.next_cursor`).",
  security,
  middleware: [requireRole("admin", "finance", "marketplace")] as const,
  request: { params: z.object({ id: BatchId }), query: RejectionQuery },
  responses: {
    200: json(
      BatchOut.extend({ rejections: page(RejectionOut, "UsageBatchRejectionPage") }).openapi("UsageBatchDetail"),
      "the batch and a page of its rejections",
    ),
    ...errorResponses,
  },
});

const KIND = "usagebatches";

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(list, async (c) => {
    const q = c.req.valid("query");
    const p = c.get("principal");
    const before = decodeTimeCursor(KIND, q.cursor);
    const scopedAway = p.role === "marketplace" && q.marketplace_id !== undefined && q.marketplace_id !== p.scopeId;
    const rows = scopedAway
      ? []
      : await listUsageBatchRows(c.get("deps").ledger.db, {
          marketplaceId: p.role === "marketplace" ? p.scopeId! : q.marketplace_id,
          hasRejections: q.has_rejections === undefined ? undefined : q.has_rejections === "true",
          before: before && { at: before.at, id: `ub_${before.id}` },
          limit: q.limit + 1,
        });
    const scales = await totalScales(c.get("deps").ledger.db, rows);
    return c.json(
      pageOf(rows, q.limit, batchOut(scales), (b) => encodeTimeCursor(KIND, b.received_at, b.id.slice(3))),
      200,
    );
  });

  app.openapi(get, async (c) => {
    const { id } = c.req.valid("param");
    const q = c.req.valid("query");
    if (q.cursor !== undefined && !/^[0-9]{1,6}$/.test(q.cursor))
      throw new ApiError("invalid_request", "cursor is not one this API returned", [{ path: "cursor", message: "invalid" }]);
    const db = c.get("deps").ledger.db;
    const batch = await getUsageBatchRow(db, id);
    if (!batch || !canReadMarketplace(c, batch.marketplace_id)) throw new ApiError("usage_batch_not_found", `usage batch ${id} does not exist`);
    const rows = await listUsageBatchRejections(db, id, q.cursor === undefined ? -1 : Number(q.cursor), q.limit + 1);
    const rejections = pageOf(
      rows,
      q.limit,
      (r) => ({ index: r.record_index, external_id: r.external_id, code: r.code, reason: r.reason, field: r.field }),
      (r) => String(r.record_index),
    );
    return c.json({ ...batchOut(await totalScales(db, [batch]))(batch), rejections }, 200);
  });
}
