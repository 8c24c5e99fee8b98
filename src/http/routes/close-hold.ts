import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { closeHold, getHold } from "../../services/holds.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { replayOrRun } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { ApiError } from "../problem.js";
import { IdParam } from "../schemas.js";
import { canReadMarketplace } from "../tenancy.js";
import { errorResponses, IdempotencyHeader, json, NoBody, security } from "./common.js";
import { HoldOut, holdOut } from "./hold-schemas.js";

const route = createRoute({
  method: "post",
  path: "/v1/holds/{id}/close",
  operationId: "closeHold",
  tags: ["usage"],
  summary: "Close a hold: what is left goes back to the customer (admin, its marketplace)",
  security,
  middleware: [requireRole("admin", "marketplace"), jsonBodyGuard] as const,
  request: { params: IdParam, headers: IdempotencyHeader, body: NoBody },
  responses: { 200: json(HoldOut, "closed"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const db = c.get("deps").ledger.db;
    const hold = await getHold(db, id);
    if (!hold || !canReadMarketplace(c, hold.marketplaceId)) throw new ApiError("hold_not_found", `hold ${id} does not exist`);
    // The key is checked before anything is written: a key used for another request closes nothing.
    return replayOrRun(c, {}, async (_, receipts) => {
      const { hold: closed, changed } = await closeHold(db, { id, receipt: receipts.audited(200) });
      return { status: 200, body: holdOut(closed), receipt: changed ? "audit" : undefined };
    }) as never;
  });
}
