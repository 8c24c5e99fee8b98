import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { proposePayoutPolicy } from "../../services/proposals.js";
import { requireRole } from "../auth.js";
import { idempotently } from "../idempotency.js";
import type { AppEnv } from "../request-context.js";
import { jsonBodyGuard } from "../json-body.js";
import { Amount, AssetCode } from "../money-schemas.js";
import { errorResponses, json, jsonBody, security } from "./common.js";
import { ProposalOut, proposalOut } from "./proposal-schemas.js";

const Body = z
  .strictObject({
    min_amount: Amount.openapi({ description: "smallest payout, in the asset's smallest units" }),
    schedule: z
      .enum(["manual", "interval"])
      .openapi({ description: "manual: on request only; interval: the worker also pays every operator's available balance each interval" }),
    interval_seconds: z
      .number()
      .int()
      .min(60)
      .max(366 * 24 * 3600)
      .optional(),
    max_gas_share_bps: z
      .number()
      .int()
      .min(1)
      .max(10_000)
      .nullable()
      .optional()
      .openapi({ description: "gas may cost at most this share of a payout (basis points); payouts above it wait" }),
    max_per_payout: Amount.nullable()
      .optional()
      .openapi({ description: "the largest payout of one operator in this asset (smallest units); absent or null: no cap" }),
    approval_threshold: Amount.nullable().optional().openapi({
      description: "a payout above this waits for the approval of a second key (finance or admin, not the one that asked for it); absent or null: none does",
    }),
    max_per_day: Amount.nullable().optional().openapi({
      description:
        "the most one operator may be paid of this asset per UTC day, counting the payouts asked for that day that did not fail; absent or null: no cap",
    }),
  })
  .openapi("PayoutPolicySet");

const route = createRoute({
  method: "put",
  path: "/v1/payout-policies/{asset}",
  operationId: "setPayoutPolicy",
  tags: ["payouts"],
  summary: "Propose an asset's payout policy (admin); it is in force when another key approves it",
  security,
  middleware: [requireRole("admin"), jsonBodyGuard] as const,
  request: { params: z.object({ asset: AssetCode }), body: jsonBody(Body) },
  responses: {
    202: json(
      ProposalOut,
      "the proposal: the policy changes when another key approves it (POST /v1/proposals/{id}/approve); the same change asked again answers the open one",
    ),
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { asset } = c.req.valid("param");
    const b = c.req.valid("json");
    const db = c.get("deps").ledger.db;
    return idempotently(c, b, async (tx) => ({
      status: 202,
      body: proposalOut(
        await proposePayoutPolicy(tx, {
          now: db.clock.now(),
          by: c.get("principal"),
          asset,
          minAmount: BigInt(b.min_amount),
          schedule: b.schedule,
          intervalSeconds: b.interval_seconds,
          maxGasShareBps: b.max_gas_share_bps ?? null,
          maxPerPayout: b.max_per_payout == null ? null : BigInt(b.max_per_payout),
          maxPerDay: b.max_per_day == null ? null : BigInt(b.max_per_day),
          approvalThreshold: b.approval_threshold == null ? null : BigInt(b.approval_threshold),
        }),
      ),
    })) as never;
  });
}
