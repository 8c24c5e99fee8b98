import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { cancelPayout } from "../../services/cancel-payout.js";
import { getPayout } from "../../services/payouts.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { replayOrRun } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { IdParam } from "../schemas.js";
import { errorResponses, IdempotencyHeader, json, NoBody, security } from "./common.js";
import { visiblePayout } from "./payout-access.js";
import { PayoutOut, payoutOut } from "./payout-schemas.js";

const route = createRoute({
  method: "post",
  path: "/v1/payouts/{id}/cancel",
  operationId: "cancelPayout",
  tags: ["payouts"],
  summary: "Cancel a payout no chain transaction has taken yet: its hold is voided (admin, finance, its operator)",
  security,
  middleware: [requireRole("admin", "finance", "operator"), jsonBodyGuard] as const,
  request: { params: IdParam, headers: IdempotencyHeader, body: NoBody },
  responses: { 200: json(PayoutOut, "cancelled (status failed)"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    await visiblePayout(c, id);
    const db = c.get("deps").ledger.db;
    return replayOrRun(c, {}, async (_, receipts) => {
      const now = await getPayout(db, id);
      // A retry of a cancel that went through answers the same.
      const repeat = now?.status === "failed" && now.failureReason?.startsWith("cancelled");
      const done = repeat ? now : await cancelPayout(db, { id, by: c.get("principal").keyId, receipt: receipts.audited(200) });
      return { status: 200, body: payoutOut(done), receipt: repeat ? undefined : "audit" };
    }) as never;
  });
}
