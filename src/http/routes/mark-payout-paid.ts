import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { markPayoutPaid } from "../../services/mark-payout-paid.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { replayOrRun } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { IdParam } from "../schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { visiblePayout } from "./payout-access.js";
import { PayoutOut, payoutOut } from "./payout-schemas.js";

const Body = z
  .strictObject({
    reference: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[\x20-\x7e]+$/, "must be printable ASCII")
      .openapi({ description: "the bank or payment reference of the off-chain payment", example: "SEPA-2026-11-29-0042" }),
  })
  .openapi("PayoutMarkPaid");

const route = createRoute({
  method: "post",
  path: "/v1/payouts/{id}/mark-paid",
  operationId: "markPayoutPaid",
  tags: ["payouts"],
  summary: "Confirm an off-chain payout with the reference of the payment made outside the service (admin, finance)",
  security,
  middleware: [requireRole("admin", "finance"), jsonBodyGuard] as const,
  request: { params: IdParam, headers: IdempotencyHeader, body: jsonBody(Body) },
  responses: { 200: json(PayoutOut, "confirmed"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    await visiblePayout(c, id);
    return replayOrRun(c, body, async (_, receipts) => {
      const { payout, changed } = await markPayoutPaid(c.get("deps").ledger.db, { id, reference: body.reference, receipt: receipts.audited(200) });
      return { status: 200, body: payoutOut(payout), receipt: changed ? "audit" : undefined };
    }) as never;
  });
}
