import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { errorResponses, json, security } from "./common.js";
import { visibleOperator } from "./operator-access.js";
import { FundingSplit, fundingSplits } from "./operator-funding.js";
import { PartyIdParam } from "./party-schemas.js";

const Balance = FundingSplit.extend({
  account_id: z.string(),
  pending: z.string().openapi({ description: "held for payouts requested but not yet signed for the chain (or, off-chain, not yet marked paid)" }),
  in_transit: z.string().openapi({ description: "in payouts signed or sent, awaiting confirmation" }),
  paid_out: z.string().openapi({ description: "confirmed payouts, lifetime" }),
  lifetime_earned: z.string().openapi({ description: "net of all usage not reversed" }),
}).openapi("OperatorBalance");

const route = createRoute({
  method: "get",
  path: "/v1/operators/{id}/balances",
  operationId: "getOperatorBalances",
  tags: ["operators"],
  summary: "An operator's balances per asset (admin, finance, the operator)",
  security,
  middleware: [requireRole("admin", "finance", "operator")] as const,
  request: { params: z.object({ id: PartyIdParam }) },
  responses: { 200: json(z.object({ operator_id: z.string(), data: z.array(Balance) }), "balances per asset"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    await visibleOperator(c, id);
    const db = c.get("deps").ledger.db;
    const data = (await fundingSplits(db, id)).map(({ split, row: r }) => ({
      asset_id: split.asset_id,
      asset: split.asset,
      account_id: r.account_id,
      available: split.available,
      payable_now: split.payable_now,
      awaiting_funds: split.awaiting_funds,
      awaiting_funds_by_marketplace: split.awaiting_funds_by_marketplace,
      pending: (BigInt(r.debits_pending) - BigInt(r.in_transit)).toString(),
      in_transit: r.in_transit,
      paid_out: r.paid_out,
      lifetime_earned: r.earned,
    }));
    return c.json({ operator_id: id, data }, 200);
  });
}
