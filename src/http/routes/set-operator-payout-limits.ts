import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { proposeOperatorPayoutLimits } from "../../services/proposals.js";
import { requireRole } from "../auth.js";
import { idempotently } from "../idempotency.js";
import type { AppEnv } from "../request-context.js";
import { jsonBodyGuard } from "../json-body.js";
import { Amount, AssetCode } from "../money-schemas.js";
import { errorResponses, json, jsonBody, security } from "./common.js";
import { OperatorId } from "./party-schemas.js";
import { ProposalOut, proposalOut } from "./proposal-schemas.js";

const Body = z
  .strictObject({
    max_per_payout: Amount.nullable().openapi({
      description: "the largest payout of this operator in the asset (smallest units); null: the asset's policy alone",
    }),
    max_per_day: Amount.nullable().openapi({ description: "the most this operator may be paid of the asset per UTC day; null: the asset's policy alone" }),
  })
  .openapi("OperatorPayoutLimitsSet");

const route = createRoute({
  method: "put",
  path: "/v1/operators/{id}/payout-limits/{asset}",
  operationId: "setOperatorPayoutLimits",
  tags: ["payouts"],
  summary: "Propose an operator's own payout caps in an asset (admin, finance); the lower of these and the policy's applies once another key approves",
  security,
  middleware: [requireRole("admin", "finance"), jsonBodyGuard] as const,
  request: { params: z.object({ id: OperatorId, asset: AssetCode }), body: jsonBody(Body) },
  responses: { 202: json(ProposalOut, "the proposal: the caps change when another key approves it (POST /v1/proposals/{id}/approve)"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id, asset } = c.req.valid("param");
    const b = c.req.valid("json");
    const db = c.get("deps").ledger.db;
    return idempotently(c, b, async (tx) => ({
      status: 202,
      body: proposalOut(
        await proposeOperatorPayoutLimits(tx, {
          now: db.clock.now(),
          by: c.get("principal"),
          operatorId: id,
          asset,
          maxPerPayout: b.max_per_payout === null ? null : BigInt(b.max_per_payout),
          maxPerDay: b.max_per_day === null ? null : BigInt(b.max_per_day),
        }),
      ),
    })) as never;
  });
}
