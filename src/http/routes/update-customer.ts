import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { updateCustomer } from "../../services/update-customer.js";
import { requireRole } from "../auth.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { ApiError } from "../problem.js";
import type { AppEnv } from "../request-context.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { customerMarketplace } from "./party-access.js";
import { Customer, CustomerId, customerOut, MarketplaceId } from "./party-schemas.js";
import { CustomerUpdate } from "./party-update-schemas.js";

const Query = z.strictObject({
  marketplace_id: MarketplaceId.optional().openapi({ description: "admin keys: required (customer ids are per marketplace)" }),
});

const route = createRoute({
  method: "patch",
  path: "/v1/customers/{id}",
  operationId: "updateCustomer",
  tags: ["usage"],
  summary: "Replace a customer's metadata (admin with marketplace_id; its marketplace)",
  security,
  middleware: [requireRole("admin", "marketplace"), jsonBodyGuard] as const,
  request: { params: z.object({ id: CustomerId }), query: Query, headers: IdempotencyHeader, body: jsonBody(CustomerUpdate) },
  responses: { 200: json(Customer, "the customer as changed"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    // Another marketplace's customer is answered as a missing one, without reading it.
    const marketplaceId = customerMarketplace(c, c.req.valid("query").marketplace_id);
    if (marketplaceId === undefined) throw new ApiError("customer_not_found", `customer ${id} does not exist`);
    return idempotently(c, body, async (tx) => ({ status: 200, body: customerOut(await updateCustomer(tx, { marketplaceId, id, change: body })) })) as never;
  });
}
