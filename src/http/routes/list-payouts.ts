import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { payoutStatuses } from "../../domain/payouts.js";
import { listPayouts } from "../../services/payouts.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { periodQuery } from "../period.js";
import { CursorQuery, page, pageOf } from "../schemas.js";
import { AssetCode } from "../money-schemas.js";
import { assetFilter, errorResponses, json, listWindow, security } from "./common.js";
import { actorRef } from "./api-key-schema.js";
import { OperatorId } from "./party-schemas.js";
import { PayoutOut, payoutOut } from "./payout-schemas.js";

const Query = CursorQuery.extend({
  operator_id: OperatorId.optional(),
  asset: AssetCode.optional(),
  status: z.enum(payoutStatuses).optional(),
  requested_by: actorRef({ scheduler: true }).optional().openapi({
    description: "only the payouts this key asked for: a key's id, `bootstrap-admin` (the key from ADMIN_API_KEY), or `scheduler` (the payout schedule)",
  }),
  chain_id: z
    .string()
    .regex(/^[1-9][0-9]{0,15}$/, "must be a chain id")
    .optional()
    .openapi({ example: "8453" }),
  ...periodQuery({ optional: true, from: "created at or after", to: "created before" }),
});

const route = createRoute({
  method: "get",
  path: "/v1/payouts",
  operationId: "listPayouts",
  tags: ["payouts"],
  summary: "List payouts, filtered (also by the key that asked: requested_by); operator keys see their own",
  security,
  middleware: [requireRole("admin", "finance", "operator")] as const,
  request: { query: Query },
  responses: { 200: json(page(PayoutOut, "PayoutPage"), "a page of payouts, oldest first"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const { from, to } = listWindow(q);
    const p = c.get("principal");
    const db = c.get("deps").ledger.db;
    const assetId = await assetFilter(db, q.asset);
    const scopedAway = p.role === "operator" && q.operator_id !== undefined && q.operator_id !== p.scopeId;
    const rows = scopedAway
      ? []
      : await listPayouts(db, {
          operatorId: p.role === "operator" ? p.scopeId! : q.operator_id,
          assetId,
          status: q.status,
          requestedBy: q.requested_by,
          chainId: q.chain_id === undefined ? undefined : BigInt(q.chain_id),
          from,
          to,
          after: q.cursor,
          limit: q.limit + 1,
        });
    return c.json(
      pageOf(rows, q.limit, payoutOut, (r) => r.id),
      200,
    );
  });
}
