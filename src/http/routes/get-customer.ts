import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { getCustomerWithAccounts, type CustomerAccount } from "../../services/party-reads.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { ApiError } from "../problem.js";
import { display, DisplayAmount, displayOrNull } from "../display.js";
import { SignedAmount } from "../money-schemas.js";
import { Uuid } from "../schemas.js";
import { errorResponses, json, security } from "./common.js";
import { customerMarketplace } from "./party-access.js";
import { Customer, CustomerId, customerOut, MarketplaceId } from "./party-schemas.js";

const CustomerAccountOut = z
  .object({
    asset: z.string().openapi({ example: "TUSD" }),
    account_id: Uuid,
    posted: SignedAmount.openapi({ description: "posted balance (negative: what a postpaid customer owes)" }),
    posted_display: DisplayAmount,
    available: SignedAmount.openapi({ description: "posted balance less open holds" }),
    available_display: DisplayAmount,
    credit_limit: z.string().nullable().openapi({ example: "500000000", description: "postpaid: how much the customer may owe in the asset; prepaid: null" }),
    credit_limit_display: DisplayAmount.nullable(),
  })
  .openapi("CustomerAccount");

const CustomerWithAccounts = Customer.extend({
  accounts: z.array(CustomerAccountOut).openapi({
    description: "the customer's balance in each asset it has an account in (opened by its first deposit, usage or credit limit), by asset code",
  }),
}).openapi("CustomerWithAccounts");

const Query = z.strictObject({
  marketplace_id: MarketplaceId.optional().openapi({ description: "admin and finance keys: required (customer ids are per marketplace)" }),
});

const route = createRoute({
  method: "get",
  path: "/v1/customers/{id}",
  operationId: "getCustomer",
  tags: ["usage"],
  summary: "Read a customer with its account and balance in each asset (admin, finance with marketplace_id; its marketplace)",
  security,
  middleware: [requireRole("admin", "finance", "marketplace")] as const,
  request: { params: z.object({ id: CustomerId }), query: Query },
  responses: { 200: json(CustomerWithAccounts, "the customer and its accounts"), ...errorResponses },
});

const accountOut = (a: CustomerAccount) => ({
  asset: a.asset,
  account_id: a.accountId,
  posted: a.posted.toString(),
  posted_display: display(a.posted, a.scale),
  available: a.available.toString(),
  available_display: display(a.available, a.scale),
  credit_limit: a.creditLimit?.toString() ?? null,
  credit_limit_display: displayOrNull(a.creditLimit, a.scale),
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const marketplaceId = customerMarketplace(c, c.req.valid("query").marketplace_id);
    // Another marketplace's customer is answered as a missing one, without reading it.
    const cu = marketplaceId === undefined ? undefined : await getCustomerWithAccounts(c.get("deps").ledger.db, marketplaceId, id);
    if (!cu) throw new ApiError("customer_not_found", `customer ${id} does not exist`);
    return c.json({ ...customerOut(cu), accounts: cu.accounts.map(accountOut) }, 200);
  });
}
