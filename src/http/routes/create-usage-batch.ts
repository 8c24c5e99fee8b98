import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { Database, Queryable, WriteReceipt } from "../../services/context.js";
import { tenantOf, type Role } from "../../domain/access.js";
import { LedgerError } from "../../domain/errors.js";
import { ingestUsage, type AssetTotal, type LoggedResult, type UsageItem, type UsageResult } from "../../services/ingest-usage.js";
import { newUsageBatchId, recordUsageBatch } from "../../services/usage-batches.js";
import { batchLogOf, sentExternalId, type BatchLogContext } from "../usage-batch-log.js";
import { getAssetScales } from "../../services/reads.js";
import { maybeGiveWay } from "../../give-way.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { replayOrRun } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { ApiError, Problem, problemBody } from "../problem.js";
import { actingMarketplace } from "../tenancy.js";
import { toUsageInput, UsageIn, UsageRecordOut, usageOut } from "../usage-schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { MarketplaceId } from "./party-schemas.js";

export const MAX_USAGE_BATCH = 10_000;

const Body = z
  .strictObject({
    records: z.array(z.unknown()).min(1).max(MAX_USAGE_BATCH).openapi({ description: "UsageCreate objects; each is checked on its own" }),
    atomic: z.boolean().default(false).openapi({ description: "all or nothing: one rejected record and none is written" }),
    results: z.enum(["compact", "full"]).default("compact").openapi({
      description:
        "compact (default): per record its index, status, external_id, and the record's id or the problem's code and a short detail; full: each record, or the whole problem",
    }),
    marketplace_id: MarketplaceId.optional().openapi({ description: "admin keys only" }),
  })
  .openapi("UsageBatchCreate");

const Result = z.object({
  index: z.number().int().openapi({ description: "the record's place in `records`, from 0" }),
  status: z.enum(["accepted", "duplicate", "rejected"]),
  external_id: z.string().optional().openapi({ description: "as sent (absent when the record did not have a valid one)" }),
  id: z.string().optional().openapi({ description: "accepted or duplicate: the usage record's id" }),
  code: z.string().optional().openapi({ description: "rejected: the problem's code" }),
  field: z.string().optional().openapi({ description: "rejected: the first field the problem names, if any (results: full gives the whole problem)" }),
  record: UsageRecordOut.optional().openapi({ description: "results: full only" }),
  error: Problem.optional().openapi({ description: "results: full only" }),
});

/** Who may post a batch; its admission (src/http/batch-admission.ts) refuses the others before they queue. */
export const USAGE_BATCH_ROLES = ["admin", "marketplace"] as const satisfies readonly Role[];

const route = createRoute({
  method: "post",
  path: "/v1/usage/batch",
  operationId: "createUsageBatch",
  tags: ["usage"],
  summary: `Post up to ${MAX_USAGE_BATCH.toLocaleString("en")} usage records (marketplace; admin with marketplace_id)`,
  description:
    'Written set-based in one database transaction. One result per record, in order: accepted, duplicate (the original record) or rejected (with the reason). Results are compact unless `results: "full"` is asked for.',
  security,
  middleware: [requireRole(...USAGE_BATCH_ROLES), jsonBodyGuard] as const,
  request: { headers: IdempotencyHeader, body: jsonBody(Body) },
  responses: {
    200: json(
      z
        .object({
          batch_id: z
            .string()
            .openapi({ description: "the batch's log: GET /v1/usage-batches/{id} (the same id when the request is retried with its Idempotency-Key)" }),
          summary: z.object({ accepted: z.number().int(), duplicate: z.number().int(), rejected: z.number().int() }),
          results: z.array(Result),
        })
        .openapi("UsageBatchResult"),
      "one result per record",
    ),
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const body = c.req.valid("json");
    const marketplaceId = await actingMarketplace(c, body.marketplace_id);
    return replayOrRun(c, body, async (_, receipts) => {
      const db = c.get("deps").ledger.db;
      const log: BatchLogContext = {
        id: newUsageBatchId(),
        marketplaceId,
        idempotencyKey: c.req.header("idempotency-key") ?? null,
        tenant: tenantOf(c.get("principal")),
        receivedAt: db.clock.now(),
        records: body.records,
      };
      const out = await ingestBatch(db, log, body, receipts.audited(200));
      return { status: 200, body: out, remember: out.summary.rejected === 0, receipt: out.summary.accepted > 0 ? "audit" : undefined };
    }) as never;
  });
}

/** Each record is checked on its own, then the valid ones are ingested in one set-based batch. */
async function ingestBatch(
  db: Database,
  log: BatchLogContext,
  body: { records: unknown[]; atomic: boolean; results: "compact" | "full" },
  receipt: WriteReceipt<void>,
) {
  // Each record is checked on its own: a malformed one is rejected without failing the others.
  const results: (UsageResult | undefined)[] = new Array(body.records.length);
  const items: UsageItem[] = [];
  const at: number[] = [];
  for (const [i, raw] of body.records.entries()) {
    // A large batch gives way to other requests every few hundred records (docs/performance.md).
    await maybeGiveWay(i);
    const parsed = UsageIn.safeParse(raw);
    if (parsed.success) {
      items.push({ marketplaceId: log.marketplaceId, input: toUsageInput(parsed.data) });
      at.push(i);
    } else {
      const issues = parsed.error.issues.map((x) => ({ path: x.path.join(".") || "(record)", message: x.message }));
      results[i] = { status: "rejected", error: new LedgerError("invalid_request", issues.map((x) => `${x.path}: ${x.message}`).join("; "), issues) };
    }
  }
  if (body.atomic && items.length < body.records.length) {
    for (const i of at)
      results[i] = { status: "rejected", error: new LedgerError("atomic_batch_aborted", "not written: another record of this atomic batch was rejected") };
  } else {
    // The log goes in the transaction of the records written; without any, it is written alone below.
    const writer = async (tx: Queryable, written: LoggedResult[], totals: AssetTotal[]) => {
      const all: LoggedResult[] = [...(results as LoggedResult[])];
      written.forEach((r, k) => (all[at[k]!] = r));
      log.id = await recordUsageBatch(tx, batchLogOf(log, all, totals));
    };
    const written = await ingestUsage(db, items, { atomic: body.atomic, receipt, log: writer });
    written.forEach((r, k) => (results[at[k]!] = r));
  }
  const final = results as UsageResult[];
  if (!final.some((r) => r.status === "accepted")) log.id = await recordUsageBatch(db, batchLogOf(log, final, []));
  return { batch_id: log.id, ...(await answerOf(db, body, final)) };
}

/** The batch's answer: the summary and one result per record, compact or full (each record with its amounts' display twins). */
async function answerOf(db: Database, body: { records: unknown[]; results: "compact" | "full" }, results: UsageResult[]) {
  const scales =
    body.results === "full"
      ? await getAssetScales(
          db,
          results.flatMap((r) => (r.status === "rejected" ? [] : [r.record.assetId])),
        )
      : new Map<string, number>();
  const out = { summary: { accepted: 0, duplicate: 0, rejected: 0 }, results: [] as Record<string, unknown>[] };
  for (const [index, r] of results.entries()) {
    await maybeGiveWay(index);
    out.summary[r.status]++;
    const externalId = r.status === "rejected" ? sentExternalId(body.records[index]) : r.record.externalId;
    if (body.results === "full") {
      out.results.push(
        r.status === "rejected"
          ? { index, status: r.status, external_id: externalId, error: wireProblem(r.error) }
          : { index, status: r.status, external_id: externalId, id: r.record.id, record: usageOut(r.record, scales.get(r.record.assetId)!) },
      );
    } else if (r.status === "rejected") {
      const problem = ApiError.from(r.error);
      out.results.push({
        index,
        status: r.status,
        external_id: externalId,
        code: problem.code,
        ...(problem.errors[0] ? { field: problem.errors[0].path } : {}),
      });
    } else {
      out.results.push({ index, status: r.status, external_id: externalId, id: r.record.id });
    }
  }
  return out;
}

function wireProblem(err: LedgerError) {
  const e = ApiError.from(err);
  return problemBody(e.code, e.detail, e.errors);
}
