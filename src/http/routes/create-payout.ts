import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { createPayout } from "../../services/payouts.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { replayOrRun } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { Amount, AssetCode } from "../money-schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { OperatorId } from "./party-schemas.js";
import { actingOperator } from "./payout-access.js";
import { PayoutOut, payoutOut } from "./payout-schemas.js";

const Body = z
  .strictObject({
    operator_id: OperatorId.optional().openapi({ description: "required for admin and finance keys; an operator key pays itself" }),
    asset: AssetCode,
    amount: Amount,
  })
  .openapi("PayoutCreate");

const route = createRoute({
  method: "post",
  path: "/v1/payouts",
  operationId: "createPayout",
  tags: ["payouts"],
  summary: "Request a payout of an operator's available balance (the operator, finance, admin)",
  security,
  description:
    "Places a hold on the operator's payable at once (refused with exceeds_credits beyond the available balance). Payouts of an asset that settles on a chain are paid by the payout worker to the operator's verified address; off-chain assets are marked paid by finance.",
  middleware: [requireRole("admin", "finance", "operator"), jsonBodyGuard] as const,
  request: { headers: IdempotencyHeader, body: jsonBody(Body) },
  responses: { 201: json(PayoutOut, "created: pending"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const body = c.req.valid("json");
    const operatorId = actingOperator(c, body.operator_id);
    const deps = c.get("deps");
    return replayOrRun(c, body, async (ledgerKey, receipts) => {
      const { payout, replayed } = await createPayout(deps.ledger.db, deps.settlements, {
        operatorId,
        asset: body.asset,
        amount: BigInt(body.amount),
        trigger: "request",
        requestedBy: c.get("principal").keyId,
        idempotencyKey: ledgerKey("payout"),
        receipt: receipts.audited(201),
      });
      return { status: 201, body: payoutOut(payout), receipt: replayed ? undefined : "audit" };
    }) as never;
  });
}
