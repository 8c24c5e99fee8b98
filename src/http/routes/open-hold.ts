import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { openHold } from "../../services/holds.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { replayOrRun } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { Amount, AssetCode } from "../money-schemas.js";
import { actingMarketplace } from "../tenancy.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { HoldOut, holdOut } from "./hold-schemas.js";
import { CustomerId, MarketplaceId } from "./party-schemas.js";

const Body = z
  .strictObject({
    customer_id: CustomerId,
    asset: AssetCode,
    amount: Amount,
    timeout_seconds: z
      .number()
      .int()
      .min(1)
      .max(366 * 24 * 3600)
      .optional()
      .openapi({ description: "release what is left after this long" }),
    marketplace_id: MarketplaceId.optional().openapi({ description: "admin keys only" }),
  })
  .openapi("HoldCreate");

const route = createRoute({
  method: "post",
  path: "/v1/holds",
  operationId: "openHold",
  tags: ["usage"],
  summary: "Reserve a prepaid customer's funds for a running job (admin, marketplace)",
  security,
  middleware: [requireRole("admin", "marketplace"), jsonBodyGuard] as const,
  request: { headers: IdempotencyHeader, body: jsonBody(Body) },
  responses: { 201: json(HoldOut, "reserved"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const body = c.req.valid("json");
    const marketplaceId = await actingMarketplace(c, body.marketplace_id);
    return replayOrRun(c, body, async (ledgerKey, receipts) => {
      const { replayed, ...hold } = await openHold(c.get("deps").ledger.db, {
        marketplaceId,
        customerId: body.customer_id,
        asset: body.asset,
        amount: BigInt(body.amount),
        timeoutSeconds: body.timeout_seconds,
        idempotencyKey: ledgerKey("hold"),
        receipt: receipts.audited(201),
      });
      return { status: 201, body: holdOut(hold), receipt: replayed ? undefined : "audit" };
    }) as never;
  });
}
