import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { withPricing } from "../../services/marketplace-pricing.js";
import { createMarketplace } from "../../services/marketplaces.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { Metadata } from "../schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { Marketplace, PartyIdParam, marketplaceOut } from "./party-schemas.js";

const Body = z
  .strictObject({ id: PartyIdParam.openapi({ example: "gpu-market" }), name: z.string().min(1).max(200), metadata: Metadata.optional() })
  .openapi("MarketplaceCreate");

const route = createRoute({
  method: "post",
  path: "/v1/marketplaces",
  operationId: "createMarketplace",
  tags: ["usage"],
  summary: "Create a marketplace (admin)",
  security,
  middleware: [requireRole("admin"), jsonBodyGuard] as const,
  request: { headers: IdempotencyHeader, body: jsonBody(Body) },
  responses: { 201: json(Marketplace, "created (or the identical one, already there)"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const body = c.req.valid("json");
    return idempotently(c, body, async (tx) => {
      const [m] = await withPricing(tx, [await createMarketplace(tx, body)]);
      return { status: 201, body: marketplaceOut(m!) };
    }) as never;
  });
}
