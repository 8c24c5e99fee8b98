import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { proposeReceipt } from "../../services/proposals.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { Amount, AssetCode } from "../money-schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { CustomerId, MarketplaceId } from "./party-schemas.js";
import { ProposalOut, proposalOut } from "./proposal-schemas.js";

const Body = z
  .strictObject({
    asset: AssetCode,
    amount: Amount,
    reference: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[\x20-\x7e]+$/, "must be printable ASCII")
      .openapi({
        description: "where the money can be found (a bank transfer's reference, an on-chain transaction hash); money with one reference is received once",
        example: "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060",
      }),
    customer_id: CustomerId.optional().openapi({ description: "money paid for this customer; absent: the marketplace's settlement of what it owes" }),
  })
  .openapi("ReceiptPropose");

const route = createRoute({
  method: "post",
  path: "/v1/marketplaces/{id}/receipts",
  operationId: "createReceipt",
  tags: ["funding"],
  summary: "Propose to record money received for a marketplace; another key approves it (finance, admin)",
  security,
  middleware: [requireRole("finance", "admin"), jsonBodyGuard] as const,
  request: { params: z.object({ id: MarketplaceId }), headers: IdempotencyHeader, body: jsonBody(Body) },
  responses: { 201: json(ProposalOut, "the proposal; nothing moves until another key approves it"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const b = c.req.valid("json");
    const db = c.get("deps").ledger.db;
    return idempotently(c, b, async (tx) => {
      const p = await proposeReceipt(tx, {
        now: db.clock.now(),
        by: c.get("principal"),
        marketplaceId: id,
        customerId: b.customer_id,
        asset: b.asset,
        amount: BigInt(b.amount),
        reference: b.reference,
      });
      return { status: 201, body: proposalOut(p) };
    }) as never;
  });
}
