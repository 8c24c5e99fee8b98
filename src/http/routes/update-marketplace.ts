import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { withPricing } from "../../services/marketplace-pricing.js";
import { updateMarketplace } from "../../services/update-marketplace.js";
import { requireRole } from "../auth.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { ApiError } from "../problem.js";
import type { AppEnv } from "../request-context.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { Marketplace, MarketplaceId, marketplaceOut } from "./party-schemas.js";
import { PartyUpdate } from "./party-update-schemas.js";

const route = createRoute({
  method: "patch",
  path: "/v1/marketplaces/{id}",
  operationId: "updateMarketplace",
  tags: ["usage"],
  summary: "Rename a marketplace or replace its metadata (admin, that marketplace)",
  security,
  middleware: [requireRole("admin", "marketplace"), jsonBodyGuard] as const,
  request: { params: z.object({ id: MarketplaceId }), headers: IdempotencyHeader, body: jsonBody(PartyUpdate) },
  responses: { 200: json(Marketplace, "the marketplace as changed"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    const p = c.get("principal");
    // Another marketplace is answered as a missing one, without reading it.
    if (p.role === "marketplace" && p.scopeId !== id) throw new ApiError("marketplace_not_found", `marketplace ${id} does not exist`);
    return idempotently(c, body, async (tx) => {
      const [m] = await withPricing(tx, [await updateMarketplace(tx, { id, change: body })]);
      return { status: 200, body: marketplaceOut(m!) };
    }) as never;
  });
}
