import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { proposeUsageLimits } from "../../services/proposals.js";
import { requireRole } from "../auth.js";
import { idempotently } from "../idempotency.js";
import type { AppEnv } from "../request-context.js";
import { jsonBodyGuard } from "../json-body.js";
import { Amount, AssetCode } from "../money-schemas.js";
import { errorResponses, json, jsonBody, security } from "./common.js";
import { MarketplaceId } from "./party-schemas.js";
import { ProposalOut, proposalOut } from "./proposal-schemas.js";

const Rate = z
  .string()
  .max(60)
  .regex(/^(0|[1-9][0-9]{0,39})(\.[0-9]{1,18})?$/, "must be a decimal of at most 40 digits and 18 decimals")
  .openapi({ example: "1" });

const Body = z
  .strictObject({
    max_gross_per_record: Amount.nullable()
      .optional()
      .openapi({ description: "the largest gross of one record, in the asset's smallest units; null: the default" }),
    max_quantity_per_second: z
      .record(z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, "must be a unit name"), Rate.nullable())
      .optional()
      .refine((r) => r === undefined || Object.keys(r).length <= 100, "at most 100 units")
      .openapi({ description: "per unit: the largest quantity per second of a record's period; null removes a unit's rate (back to its default)" }),
  })
  .openapi("UsageLimitsSet");

const route = createRoute({
  method: "put",
  path: "/v1/marketplaces/{id}/usage-limits/{asset}",
  operationId: "setUsageLimits",
  tags: ["usage"],
  summary: "Propose what one usage record of the marketplace may claim in an asset (admin); applied when another key approves it",
  security,
  middleware: [requireRole("admin"), jsonBodyGuard] as const,
  request: { params: z.object({ id: MarketplaceId, asset: AssetCode }), body: jsonBody(Body) },
  responses: { 202: json(ProposalOut, "the proposal: the limits change when another key approves it (POST /v1/proposals/{id}/approve)"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id, asset } = c.req.valid("param");
    const b = c.req.valid("json");
    const db = c.get("deps").ledger.db;
    return idempotently(c, b, async (tx) => ({
      status: 202,
      body: proposalOut(
        await proposeUsageLimits(tx, {
          now: db.clock.now(),
          by: c.get("principal"),
          marketplaceId: id,
          asset,
          maxGrossPerRecord: b.max_gross_per_record === undefined ? undefined : b.max_gross_per_record === null ? null : BigInt(b.max_gross_per_record),
          maxQuantityPerSecond: b.max_quantity_per_second,
        }),
      ),
    })) as never;
  });
}
