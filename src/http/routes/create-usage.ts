import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { WrittenUsage } from "../../services/ingest-usage.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { replayOrRun } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { ApiError } from "../problem.js";
import { assetScales, scaleIn } from "../scales.js";
import { actingMarketplace } from "../tenancy.js";
import { SingleUsageIn, toUsageInput, UsageRecordOut, usageOut } from "../usage-schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";

const route = createRoute({
  method: "post",
  path: "/v1/usage",
  operationId: "createUsage",
  tags: ["usage"],
  summary: "Post one usage record (marketplace; admin with marketplace_id)",
  description:
    "Rated and posted at once (through the group committer). Idempotent on (marketplace, external_id): a repeat answers 200 with the original record; the same external_id with other content is 409 usage_conflict.",
  security,
  middleware: [requireRole("admin", "marketplace"), jsonBodyGuard] as const,
  request: { headers: IdempotencyHeader, body: jsonBody(SingleUsageIn) },
  responses: { 201: json(UsageRecordOut, "accepted and posted"), 200: json(UsageRecordOut, "a repeat: the original record"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { marketplace_id, ...record } = c.req.valid("json");
    const marketplaceId = await actingMarketplace(c, marketplace_id);
    // The record's own idempotency is (marketplace, external_id); the header key only replays the answer.
    // A record written now has its audit row and answer written with it; a repeat is answered 200.
    const { db, usage } = c.get("deps").ledger;
    return replayOrRun(c, { marketplace_id, ...record }, async (_, receipts) => {
      // The answer is made in the write's transaction, at the scale the record was rated at. An
      // unknown asset is refused by the write.
      const receipt = receipts.answered(201, (w: WrittenUsage) => usageOut(w.record, w.scale));
      const result = await usage.submit({ marketplaceId, input: toUsageInput(record), receipt });
      if (result.status === "rejected") throw ApiError.from(result.error);
      const accepted = result.status === "accepted";
      const scale = scaleIn(await assetScales(db, [result.record.assetId]), result.record.assetId);
      return { status: accepted ? 201 : 200, body: usageOut(result.record, scale), receipt: accepted ? "answer" : undefined };
    }) as never;
  });
}
