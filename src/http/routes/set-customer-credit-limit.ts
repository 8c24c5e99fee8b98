import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { proposeCustomerCreditLimit } from "../../services/proposals.js";
import { requireRole } from "../auth.js";
import { idempotently } from "../idempotency.js";
import type { AppEnv } from "../request-context.js";
import { jsonBodyGuard } from "../json-body.js";
import { actingMarketplace } from "../tenancy.js";
import { AssetCode, numberAsString } from "../money-schemas.js";
import { errorResponses, json, jsonBody, security } from "./common.js";
import { CustomerId, MarketplaceId } from "./party-schemas.js";
import { ProposalOut, proposalOut } from "./proposal-schemas.js";

const Body = z
  .strictObject({
    credit_limit: z
      .string(numberAsString("500000000"))
      .regex(/^(0|[1-9][0-9]{0,77})$/, "must be an integer amount in the asset's smallest unit")
      .openapi({ description: "how much the postpaid customer may owe in the asset (smallest units); not below what it owes now", example: "500000000" }),
    marketplace_id: MarketplaceId.optional().openapi({ description: "admin keys only" }),
  })
  .openapi("CustomerCreditLimitSet");

const route = createRoute({
  method: "put",
  path: "/v1/customers/{id}/credit-limits/{asset}",
  operationId: "setCustomerCreditLimit",
  tags: ["usage"],
  summary: "Propose a postpaid customer's credit limit in an asset (marketplace, admin); in force when an admin or finance key approves it",
  security,
  middleware: [requireRole("marketplace", "admin"), jsonBodyGuard] as const,
  request: { params: z.object({ id: CustomerId, asset: AssetCode }), body: jsonBody(Body) },
  responses: { 202: json(ProposalOut, "the proposal: the limit changes when another key approves it (POST /v1/proposals/{id}/approve)"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id, asset } = c.req.valid("param");
    const b = c.req.valid("json");
    const marketplaceId = await actingMarketplace(c, b.marketplace_id);
    const db = c.get("deps").ledger.db;
    return idempotently(c, b, async (tx) => ({
      status: 202,
      body: proposalOut(
        await proposeCustomerCreditLimit(tx, {
          now: db.clock.now(),
          by: c.get("principal"),
          marketplaceId,
          customerId: id,
          asset,
          creditLimit: BigInt(b.credit_limit),
        }),
      ),
    })) as never;
  });
}
