import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { listPayoutAddresses } from "../../services/payout-addresses.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { Timestamp } from "../schemas.js";
import { errorResponses, json, security } from "./common.js";
import { visibleOperator } from "./operator-access.js";
import { OperatorId } from "./party-schemas.js";

const Out = z
  .object({
    operator_id: z.string(),
    data: z.array(z.object({ chain_id: z.number().int(), address: z.string(), verified_at: Timestamp })),
    history: z
      .array(
        z.object({
          chain_id: z.number().int(),
          old_address: z.string().nullable(),
          new_address: z.string(),
          changed_by: z.string(),
          changed_at: Timestamp,
          request_id: z.string().nullable(),
        }),
      )
      .openapi({ description: "the last 100 changes, newest first" }),
  })
  .openapi("PayoutAddresses");

const route = createRoute({
  method: "get",
  path: "/v1/operators/{id}/payout-addresses",
  operationId: "listPayoutAddresses",
  tags: ["operators"],
  summary: "The operator's verified payout addresses and their change history (admin, finance, the operator)",
  security,
  middleware: [requireRole("admin", "finance", "operator")] as const,
  request: { params: z.object({ id: OperatorId }) },
  responses: { 200: json(Out, "addresses per chain"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    await visibleOperator(c, id);
    const { current, history } = await listPayoutAddresses(c.get("deps").ledger.db, id);
    return c.json(
      {
        operator_id: id,
        data: current.map((r) => ({ chain_id: Number(r.chain_id), address: r.address, verified_at: new Date(r.verified_at).toISOString() })),
        history: history.map((h) => ({
          chain_id: Number(h.chain_id),
          old_address: h.old_address,
          new_address: h.new_address,
          changed_by: h.changed_by,
          changed_at: new Date(h.changed_at).toISOString(),
          request_id: h.request_id,
        })),
      },
      200,
    );
  });
}
