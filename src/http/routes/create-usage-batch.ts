import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { Database } from "../../db/client.js";
import { LedgerError } from "../../domain/errors.js";
import { ingestUsage, type UsageItem, type UsageResult } from "../../services/ingest-usage.js";
import { roles } from "../auth.js";
import type { AppEnv } from "../env.js";
import { replayOrRun } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { ApiError, Problem, problemBody } from "../problem.js";
import { actingMarketplace } from "../tenancy.js";
import { PartyIdParam, toUsageInput, UsageIn, UsageRecordOut, usageOut } from "../usage-schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";

export const MAX_USAGE_BATCH = 10_000;

const Body = z
  .strictObject({
    records: z.array(z.unknown()).min(1).max(MAX_USAGE_BATCH).openapi({ description: "UsageCreate objects; each is checked on its own" }),
    atomic: z.boolean().default(false).openapi({ description: "all or nothing: one rejected record and none is written" }),
    marketplace_id: PartyIdParam.optional().openapi({ description: "admin keys only" }),
  })
  .openapi("UsageBatchCreate");

const Result = z.object({
  status: z.enum(["accepted", "duplicate", "rejected"]),
  record: UsageRecordOut.optional(),
  error: Problem.optional(),
});

const route = createRoute({
  method: "post", path: "/v1/usage/batch", tags: ["usage"],
  summary: `Post up to ${MAX_USAGE_BATCH.toLocaleString("en")} usage records (marketplace; admin with marketplace_id)`,
  description: "Written set-based in one database transaction. One result per record, in order: accepted, duplicate (the original record) or rejected (with the reason).",
  security,
  middleware: [roles("admin", "marketplace"), jsonBodyGuard] as const,
  request: { headers: IdempotencyHeader, body: jsonBody(Body) },
  responses: {
    200: json(z.object({ summary: z.object({ accepted: z.number().int(), duplicate: z.number().int(), rejected: z.number().int() }), results: z.array(Result) }).openapi("UsageBatchResult"), "one result per record"),
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const body = c.req.valid("json");
    const marketplaceId = await actingMarketplace(c, body.marketplace_id);
    return replayOrRun(c, body, async () => {
      const out = await ingestBatch(c.get("deps").ledger.db, marketplaceId, body);
      return { status: 200, body: out, remember: out.summary.rejected === 0 };
    }) as never;
  });
}

/** Each record is checked on its own, then the valid ones are ingested in one set-based batch. */
async function ingestBatch(db: Database, marketplaceId: string, body: { records: unknown[]; atomic: boolean }) {
  // Each record is checked on its own: a malformed one is rejected without failing the others.
  const results: (UsageResult | undefined)[] = new Array(body.records.length);
  const items: UsageItem[] = [];
  const at: number[] = [];
  body.records.forEach((raw, i) => {
    const parsed = UsageIn.safeParse(raw);
    if (parsed.success) {
      items.push({ marketplaceId, input: toUsageInput(parsed.data) });
      at.push(i);
    } else {
      const issues = parsed.error.issues.map((x) => ({ path: x.path.join(".") || "(record)", message: x.message }));
      results[i] = { status: "rejected", error: new LedgerError("invalid_request", issues.map((x) => `${x.path}: ${x.message}`).join("; "), issues) };
    }
  });
  if (body.atomic && items.length < body.records.length) {
    for (const i of at) results[i] = { status: "rejected", error: new LedgerError("atomic_batch_aborted", "not written: another record of this atomic batch was rejected") };
  } else {
    const written = await ingestUsage(db, items, { atomic: body.atomic });
    written.forEach((r, k) => (results[at[k]!] = r));
  }
  const out = {
    summary: { accepted: 0, duplicate: 0, rejected: 0 },
    results: (results as UsageResult[]).map((r) => {
      const s = r.status;
      return s === "rejected" ? { status: s, error: wireProblem(r.error) } : { status: s, record: usageOut(r.record) };
    }),
  };
  for (const r of out.results) out.summary[r.status]++;
  return out;
}

function wireProblem(err: LedgerError) {
  const e = ApiError.from(err);
  return problemBody(e.code, e.detail, e.errors);
}
