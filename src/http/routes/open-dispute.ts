import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { MAX_DISPUTE_RECORDS } from "../../domain/disputes.js";
import { openDispute } from "../../services/disputes.js";
import { requireRole } from "../auth.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { ApiError } from "../problem.js";
import type { AppEnv } from "../request-context.js";
import { Uuid } from "../schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { DisputeOut, disputeOut, DisputeText } from "./dispute-schemas.js";
import { MarketplaceId } from "./party-schemas.js";

const ExternalId = z
  .string()
  .regex(/^[\x21-\x7e]{1,200}$/, "must be 1-200 printable characters without spaces")
  .openapi({ example: "job-42:hour-7" });

const Body = z
  .strictObject({
    usage_ids: z
      .array(Uuid)
      .min(1)
      .max(MAX_DISPUTE_RECORDS)
      .optional()
      .openapi({ description: `the records disputed, by id (1 to ${MAX_DISPUTE_RECORDS}, of one marketplace); or external_ids` }),
    external_ids: z
      .array(ExternalId)
      .min(1)
      .max(MAX_DISPUTE_RECORDS)
      .optional()
      .openapi({ description: "the records disputed, by the marketplace's external id", example: ["job-42:hour-7"] }),
    marketplace_id: MarketplaceId.optional().openapi({
      description: "whose records external_ids names: required for admin and finance keys; a marketplace key's own",
    }),
    reason: DisputeText.openapi({ example: "customer acme-ai: job failed after 10 minutes, billed for the hour" }),
  })
  .openapi("DisputeOpen");

const route = createRoute({
  method: "post",
  path: "/v1/disputes",
  operationId: "openDispute",
  tags: ["disputes"],
  summary: "Dispute usage records: their operators' earnings are held until finance decides (a marketplace for its own records, finance, admin)",
  security,
  middleware: [requireRole("admin", "finance", "marketplace"), jsonBodyGuard] as const,
  request: { headers: IdempotencyHeader, body: jsonBody(Body) },
  responses: { 201: json(DisputeOut, "the dispute, open"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const body = c.req.valid("json");
    if ((body.usage_ids === undefined) === (body.external_ids === undefined)) {
      throw new ApiError("invalid_request", "name the records by usage_ids or by external_ids (one of the two)", [
        { path: body.usage_ids === undefined ? "usage_ids" : "external_ids", message: "give usage_ids or external_ids, not both or neither" },
      ]);
    }
    return idempotently(c, body, async (tx) => {
      const dispute = await openDispute(tx, {
        by: c.get("principal"),
        now: c.get("deps").ledger.db.clock.now(),
        marketplaceId: body.marketplace_id,
        usageIds: body.usage_ids,
        externalIds: body.external_ids,
        reason: body.reason,
      });
      return { status: 201, body: disputeOut(dispute) };
    }) as never;
  });
}
