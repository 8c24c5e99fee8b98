import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { operatorBalances } from "../../db/queries/operator-views.js";
import { roles } from "../auth.js";
import type { AppEnv } from "../env.js";
import { PartyIdParam } from "../usage-schemas.js";
import { errorResponses, json, security } from "./common.js";
import { visibleOperator } from "./operator-access.js";

const Balance = z.object({
  asset_id: z.string(), asset: z.string(), account_id: z.string(),
  available: z.string().openapi({ description: "owed to the operator and free to pay out now" }),
  pending: z.string().openapi({ description: "held for payouts requested but not yet signed for the chain (or, off-chain, not yet marked paid)" }),
  in_transit: z.string().openapi({ description: "in payouts signed or sent, awaiting confirmation" }),
  paid_out: z.string().openapi({ description: "confirmed payouts, lifetime" }),
  lifetime_earned: z.string().openapi({ description: "net of all usage not reversed" }),
}).openapi("OperatorBalance");

const route = createRoute({
  method: "get", path: "/v1/operators/{id}/balances", tags: ["operators"], summary: "An operator's balances per asset (admin, finance, the operator)", security,
  middleware: [roles("admin", "finance", "operator")] as const,
  request: { params: z.object({ id: PartyIdParam }) },
  responses: { 200: json(z.object({ operator_id: z.string(), data: z.array(Balance) }), "balances per asset"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    await visibleOperator(c, id);
    const rows = await operatorBalances(c.get("deps").ledger.db, id);
    return c.json({
      operator_id: id,
      data: rows.map((r) => ({
        asset_id: r.asset_id, asset: r.asset_code, account_id: r.account_id,
        available: (BigInt(r.credits_posted) - BigInt(r.debits_posted) - BigInt(r.debits_pending)).toString(),
        pending: (BigInt(r.debits_pending) - BigInt(r.in_transit)).toString(),
        in_transit: r.in_transit,
        paid_out: r.paid_out,
        lifetime_earned: r.earned,
      })),
    }, 200);
  });
}
