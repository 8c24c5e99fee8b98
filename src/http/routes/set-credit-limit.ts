import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { proposeCreditLimit } from "../../services/proposals.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { AssetCode, numberAsString } from "../money-schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { MarketplaceId } from "./party-schemas.js";
import { ProposalOut, proposalOut } from "./proposal-schemas.js";

const Body = z
  .strictObject({
    asset: AssetCode,
    credit_limit: z
      .string(numberAsString("5000000000"))
      .regex(/^(0|[1-9][0-9]{0,77})$/, "must be an integer amount in the asset's smallest unit (0 for none)")
      .openapi({
        description: "how much of the marketplace's usage not yet paid for the platform advances to operators, in the asset's smallest units",
        example: "5000000000",
      }),
  })
  .openapi("CreditLimitPropose");

const route = createRoute({
  method: "post",
  path: "/v1/marketplaces/{id}/credit-limits",
  operationId: "setMarketplaceCreditLimit",
  tags: ["funding"],
  summary: "Propose a marketplace's credit limit in an asset; another key approves it (admin)",
  security,
  middleware: [requireRole("admin"), jsonBodyGuard] as const,
  request: { params: z.object({ id: MarketplaceId }), headers: IdempotencyHeader, body: jsonBody(Body) },
  responses: { 201: json(ProposalOut, "the proposal; the limit changes when another key approves it"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const b = c.req.valid("json");
    const db = c.get("deps").ledger.db;
    return idempotently(c, b, async (tx) => {
      const p = await proposeCreditLimit(tx, {
        now: db.clock.now(),
        by: c.get("principal"),
        marketplaceId: id,
        asset: b.asset,
        creditLimit: BigInt(b.credit_limit),
      });
      return { status: 201, body: proposalOut(p) };
    }) as never;
  });
}
