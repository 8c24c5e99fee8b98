import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { createCustomer } from "../../services/marketplaces.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { Metadata } from "../schemas.js";
import { actingMarketplace } from "../tenancy.js";
import { AssetCode, numberAsString } from "../money-schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { Customer, customerOut, MarketplaceId, PartyIdParam } from "./party-schemas.js";

const Body = z
  .strictObject({
    id: PartyIdParam.openapi({ example: "acme-ai" }),
    billing: z
      .enum(["prepaid", "postpaid"])
      .openapi({ description: "prepaid: usage draws on deposits and never overdraws; postpaid: usage builds a receivable" }),
    credit_limits: z
      .array(
        z.strictObject({
          asset: AssetCode,
          credit_limit: z
            .string(numberAsString("500000000"))
            .regex(/^[1-9][0-9]{0,77}$/, "must be a positive integer amount in the asset's smallest unit")
            .openapi({ example: "500000000" }),
        }),
      )
      .max(32)
      .optional()
      .openapi({
        description:
          "postpaid customers: required, at least one asset. How much the customer may owe in each asset (smallest units); its usage beyond it is refused",
      }),
    marketplace_id: MarketplaceId.optional().openapi({ description: "admin keys only" }),
    metadata: Metadata.optional(),
  })
  .openapi("CustomerCreate");

const route = createRoute({
  method: "post",
  path: "/v1/customers",
  operationId: "createCustomer",
  tags: ["usage"],
  summary: "Create a customer of a marketplace (admin, marketplace)",
  security,
  middleware: [requireRole("admin", "marketplace"), jsonBodyGuard] as const,
  request: { headers: IdempotencyHeader, body: jsonBody(Body) },
  responses: { 201: json(Customer, "created (or the identical one)"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const body = c.req.valid("json");
    const marketplaceId = await actingMarketplace(c, body.marketplace_id);
    return idempotently(c, body, async (tx) => {
      const cu = await createCustomer(tx, {
        marketplaceId,
        id: body.id,
        billing: body.billing,
        metadata: body.metadata,
        creditLimits: body.credit_limits?.map((l) => ({ asset: l.asset, creditLimit: BigInt(l.credit_limit) })),
      });
      return { status: 201, body: customerOut(cu) };
    }) as never;
  });
}
