import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { requireRole } from "../auth.js";
import { display, DisplayAmount } from "../display.js";
import type { AppEnv } from "../request-context.js";
import { errorResponses, json, security } from "./common.js";
import { operatorInScope } from "./operator-access.js";
import { FundingSplit, fundingSplits } from "./operator-funding.js";
import { OperatorId } from "./party-schemas.js";
import { readModelAfter } from "../read-source.js";

const Balance = FundingSplit.extend({
  account_id: z.string(),
  pending: z.string().openapi({ description: "held for payouts requested but not yet signed for the chain (or, off-chain, not yet marked paid)" }),
  pending_display: DisplayAmount,
  in_transit: z.string().openapi({ description: "in payouts signed or sent, awaiting confirmation" }),
  in_transit_display: DisplayAmount,
  paid_out: z.string().openapi({ description: "confirmed payouts, lifetime" }),
  paid_out_display: DisplayAmount,
  lifetime_earned: z.string().openapi({ description: "net of all usage not reversed" }),
  lifetime_earned_display: DisplayAmount,
}).openapi("OperatorBalance");

const route = createRoute({
  method: "get",
  path: "/v1/operators/{id}/balances",
  operationId: "getOperatorBalances",
  tags: ["operators"],
  summary: "An operator's balances per asset (admin, finance, the operator)",
  security,
  middleware: [requireRole("admin", "finance", "operator")] as const,
  request: { params: z.object({ id: OperatorId }) },
  responses: { 200: json(z.object({ operator_id: z.string(), data: z.array(Balance) }), "balances per asset"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    // Who may see the operator is decided before anything is read; whether it exists is read
    // together with its balances, which are answered only if it does.
    const splits = await readModelAfter(c, operatorInScope(c, id), (db) => fundingSplits(db, id), { pointRead: true });
    const data = splits.map(({ split, row: r }) => {
      const pending = BigInt(r.debits_pending) - BigInt(r.in_transit);
      return {
        asset_id: split.asset_id,
        asset: split.asset,
        account_id: r.account_id,
        available: split.available,
        available_display: split.available_display,
        payable_now: split.payable_now,
        payable_now_display: split.payable_now_display,
        awaiting_funds: split.awaiting_funds,
        awaiting_funds_display: split.awaiting_funds_display,
        awaiting_funds_by_marketplace: split.awaiting_funds_by_marketplace,
        held_by_disputes: split.held_by_disputes,
        held_by_disputes_display: split.held_by_disputes_display,
        receivable: split.receivable,
        receivable_display: split.receivable_display,
        pending: pending.toString(),
        pending_display: display(pending, r.scale),
        in_transit: r.in_transit,
        in_transit_display: display(r.in_transit, r.scale),
        paid_out: r.paid_out,
        paid_out_display: display(r.paid_out, r.scale),
        lifetime_earned: r.earned,
        lifetime_earned_display: display(r.earned, r.scale),
      };
    });
    return c.json({ operator_id: id, data }, 200);
  });
}
