import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { createMarketplace } from "../../services/marketplaces.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { Metadata } from "../schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { Marketplace, PartyIdParam, partyOut } from "./party-schemas.js";

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
    return idempotently(c, body, async (tx) => ({ status: 201, body: partyOut(await createMarketplace(tx, body)) })) as never;
  });
}
