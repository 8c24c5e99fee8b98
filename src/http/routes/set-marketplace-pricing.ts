import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { setPricingCurrency } from "../../services/marketplace-pricing.js";
import { requireRole } from "../auth.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { AssetCode } from "../money-schemas.js";
import type { AppEnv } from "../request-context.js";
import { errorResponses, json, jsonBody, security } from "./common.js";
import { Marketplace, MarketplaceId, marketplaceOut } from "./party-schemas.js";

const Body = z
  .strictObject({
    asset: AssetCode.openapi({ description: "the asset its usage is priced in (not a retired one)", example: "USD" }),
    rate_policy: z.enum(["at_payout", "at_earning"]).default("at_payout").openapi({
      description:
        "when its operators' earnings get the rate they are converted at: at_payout (the default), at the rate of the moment the payout is converted — the operator bears the rate's movement until then; at_earning, at the rate of the moment the usage is recorded (locked by the worker within seconds) — the platform bears it",
    }),
  })
  .openapi("MarketplacePricingSet");

const route = createRoute({
  method: "put",
  path: "/v1/marketplaces/{id}/pricing-currency",
  operationId: "setMarketplacePricing",
  tags: ["usage"],
  summary: "Set the currency a marketplace's usage is priced in, which its operators' payout preferences convert from (admin)",
  security,
  middleware: [requireRole("admin"), jsonBodyGuard] as const,
  request: { params: z.object({ id: MarketplaceId }), body: jsonBody(Body) },
  responses: { 200: json(Marketplace, "the marketplace, with its pricing currency"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    return idempotently(c, body, async (tx) => ({
      status: 200,
      body: marketplaceOut(
        await setPricingCurrency(tx, { now: c.get("deps").ledger.db.clock.now(), marketplaceId: id, asset: body.asset, ratePolicy: body.rate_policy }),
      ),
    })) as never;
  });
}
