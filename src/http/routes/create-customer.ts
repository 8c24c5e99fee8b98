import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { createCustomer } from "../../services/marketplaces.js";
import { roles } from "../auth.js";
import type { AppEnv } from "../env.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { Metadata } from "../schemas.js";
import { actingMarketplace } from "../tenancy.js";
import { PartyIdParam } from "../usage-schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { Customer } from "./party-schemas.js";

const Body = z
  .strictObject({
    id: PartyIdParam.openapi({ example: "acme-ai" }),
    billing: z.enum(["prepaid", "postpaid"]).openapi({ description: "prepaid: usage draws on deposits and never overdraws; postpaid: usage builds a receivable" }),
    marketplace_id: PartyIdParam.optional().openapi({ description: "admin keys only" }),
    metadata: Metadata.optional(),
  })
  .openapi("CustomerCreate");

const route = createRoute({
  method: "post", path: "/v1/customers", tags: ["usage"], summary: "Create a customer of a marketplace (admin, marketplace)", security,
  middleware: [roles("admin", "marketplace"), jsonBodyGuard] as const,
  request: { headers: IdempotencyHeader, body: jsonBody(Body) },
  responses: { 201: json(Customer, "created (or the identical one)"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const body = c.req.valid("json");
    const marketplaceId = await actingMarketplace(c, body.marketplace_id);
    return idempotently(c, body, async (tx) => {
      const cu = await createCustomer(tx, { marketplaceId, id: body.id, billing: body.billing, metadata: body.metadata });
      return { status: 201, body: { marketplace_id: cu.marketplaceId, id: cu.id, billing: cu.billing, metadata: cu.metadata, created_at: cu.createdAt.toISOString() } };
    }) as never;
  });
}
