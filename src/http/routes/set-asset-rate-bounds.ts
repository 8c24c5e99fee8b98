import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { proposeRateBounds } from "../../services/proposals.js";
import { requireRole } from "../auth.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { AssetCode } from "../money-schemas.js";
import type { AppEnv } from "../request-context.js";
import { errorResponses, json, jsonBody, security } from "./common.js";
import { ProposalOut, proposalOut } from "./proposal-schemas.js";

const Body = z
  .strictObject({
    rate_max_age_seconds: z.number().int().openapi({ description: "1 to 31536000: conversions use no rate of the asset observed longer ago", example: 900 }),
    rate_max_deviation_bps: z
      .number()
      .int()
      .openapi({ description: "0 to 10000: conversions stop while two fresh sources of its rate are further apart", example: 50 }),
  })
  .openapi("AssetRateBounds");

const route = createRoute({
  method: "put",
  path: "/v1/assets/{code}/rate-bounds",
  operationId: "setAssetRateBounds",
  tags: ["ledger"],
  summary: "Propose how old and how far apart an asset's rates may be for conversions (admin); in force when another key approves it",
  description:
    'The bounds decide which rates money is converted at (docs/settlement.md, "Rates"), so they change on two keys\' word: the answer is a proposal (202, kind rate_bounds) ' +
    "that another, independent admin or finance key approves (POST /v1/proposals/{id}/approve). The same change asked again while open answers the open proposal.",
  security,
  middleware: [requireRole("admin"), jsonBodyGuard] as const,
  request: { params: z.object({ code: AssetCode }), body: jsonBody(Body) },
  responses: { 202: json(ProposalOut, "the proposal (kind rate_bounds)"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { code } = c.req.valid("param");
    const body = c.req.valid("json");
    const db = c.get("deps").ledger.db;
    return idempotently(c, body, async (tx) => {
      const proposal = await proposeRateBounds(tx, {
        now: db.clock.now(),
        by: c.get("principal"),
        asset: code,
        maxAgeSeconds: body.rate_max_age_seconds,
        maxDeviationBps: body.rate_max_deviation_bps,
      });
      return { status: 202, body: proposalOut(proposal) };
    }) as never;
  });
}
