import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { retireCustomer } from "../../services/retire-customer.js";
import { requireRole } from "../auth.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { ApiError } from "../problem.js";
import type { AppEnv } from "../request-context.js";
import { errorResponses, IdempotencyHeader, json, NoBody, security } from "./common.js";
import { customerMarketplace } from "./party-access.js";
import { Customer, CustomerId, customerOut, MarketplaceId } from "./party-schemas.js";

const Query = z.strictObject({
  marketplace_id: MarketplaceId.optional().openapi({ description: "admin keys: required (customer ids are per marketplace)" }),
});

const route = createRoute({
  method: "post",
  path: "/v1/customers/{id}/retire",
  operationId: "retireCustomer",
  tags: ["usage"],
  summary:
    "Retire a customer: no new usage, holds or prepaid deposits for it; its balance can still be read and settled (admin with marketplace_id; its marketplace)",
  description: "Final. Afterwards those requests are 409 customer_retired. Retiring it again answers it as retired.",
  security,
  middleware: [requireRole("admin", "marketplace"), jsonBodyGuard] as const,
  request: { params: z.object({ id: CustomerId }), query: Query, headers: IdempotencyHeader, body: NoBody },
  responses: { 200: json(Customer, "the customer, retired"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const marketplaceId = customerMarketplace(c, c.req.valid("query").marketplace_id);
    if (marketplaceId === undefined) throw new ApiError("customer_not_found", `customer ${id} does not exist`);
    const db = c.get("deps").ledger.db;
    return idempotently(c, {}, async (tx) => ({
      status: 200,
      body: customerOut(await retireCustomer(tx, { now: db.clock.now(), marketplaceId, id })),
    })) as never;
  });
}
