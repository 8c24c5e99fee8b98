import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { proposeRate } from "../../services/proposals.js";
import { requireRole } from "../auth.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { AssetCode, numberAsString } from "../money-schemas.js";
import type { AppEnv } from "../request-context.js";
import { Timestamp } from "../schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { ProposalOut, proposalOut } from "./proposal-schemas.js";

const Body = z
  .strictObject({
    base: AssetCode.openapi({ example: "NET" }),
    quote: AssetCode.openapi({ example: "USD" }),
    value: z
      .string(numberAsString("2.5"))
      .regex(/^[0-9]{1,30}(\.[0-9]{1,30})?$/, "must be a positive decimal number such as 2.5, at most 30 digits before and after the point")
      .openapi({ description: "whole `quote` units one whole `base` unit is worth, as a decimal string (no sign, exponent or zero)", example: "2.5" }),
    observed_at: Timestamp.optional().openapi({
      description: "when the rate was observed (default: now); the time it waits for approval counts against the assets' staleness bound",
    }),
    reference: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[\x20-\x7e]+$/, "must be printable ASCII")
      .optional()
      .openapi({ description: "where the rate was taken from, for the record (a bank's fixing, an exchange)", example: "ECB fixing 2026-11-29" }),
  })
  .openapi("RatePropose");

const route = createRoute({
  method: "post",
  path: "/v1/rates",
  operationId: "createRate",
  tags: ["payouts"],
  summary: "Propose a manual exchange rate (finance, admin); conversions may use it once another key approves it",
  description:
    "Recorded with source `manual` when a second finance or admin key approves the proposal (POST /v1/proposals/{id}/approve). A conversion uses " +
    "the freshest source of a pair observed within its assets' staleness bound, and waits when a price feed and a manual rate disagree by more than their deviation bound.",
  security,
  middleware: [requireRole("finance", "admin"), jsonBodyGuard] as const,
  request: { headers: IdempotencyHeader, body: jsonBody(Body) },
  responses: {
    202: json(ProposalOut, "the proposal (kind `rate`): the rate is recorded when another key approves it; the same rate asked again answers the open one"),
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const b = c.req.valid("json");
    const db = c.get("deps").ledger.db;
    return idempotently(c, b, async (tx) => {
      const p = await proposeRate(tx, {
        now: db.clock.now(),
        by: c.get("principal"),
        base: b.base,
        quote: b.quote,
        value: b.value,
        observedAt: b.observed_at === undefined ? undefined : new Date(b.observed_at),
        reference: b.reference,
      });
      return { status: 202, body: proposalOut(p) };
    }) as never;
  });
}
