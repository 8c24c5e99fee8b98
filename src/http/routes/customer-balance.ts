import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { customerBalances, type CustomerBalance } from "../../services/customer-statements.js";
import { requireRole } from "../auth.js";
import { display, DisplayAmount, displayOrNull } from "../display.js";
import { SignedAmount } from "../money-schemas.js";
import type { AppEnv } from "../request-context.js";
import { Timestamp, Uuid } from "../schemas.js";
import { errorResponses, json, security } from "./common.js";
import { visibleCustomer } from "./party-access.js";
import { CustomerId, MarketplaceId } from "./party-schemas.js";
import { readModel } from "../read-source.js";

const AssetBalance = z
  .object({
    asset: z.string().openapi({ example: "USDC" }),
    asset_id: Uuid,
    account_id: Uuid.nullable().openapi({ description: "the customer's balance account in the asset" }),
    posted: SignedAmount.openapi({ description: "its balance account's posted balance (negative: what a postpaid customer owes)" }),
    posted_display: DisplayAmount,
    available: SignedAmount.openapi({ description: "posted less pending debits (a postpaid customer may spend down to −credit_limit)" }),
    available_display: DisplayAmount,
    held: SignedAmount.openapi({ description: "in its holds: reserved for running jobs, the rest returned when each hold closes" }),
    held_display: DisplayAmount,
    total: SignedAmount.openapi({ description: "posted + held: all its money with the service (a statement's closing balance for a period ending now)" }),
    total_display: DisplayAmount,
    credit_limit: z.string().nullable().openapi({ description: "postpaid: how much it may owe in the asset; prepaid: null", example: "500000000" }),
    credit_limit_display: DisplayAmount.nullable(),
  })
  .openapi("CustomerAssetBalance");

const CustomerBalances = z
  .object({
    marketplace_id: z.string().openapi({ example: "gpu-market" }),
    customer_id: z.string().openapi({ example: "acme-ai" }),
    billing: z.enum(["prepaid", "postpaid"]),
    as_of: Timestamp.openapi({ description: "the service clock's instant when the balances were read" }),
    data: z.array(AssetBalance).openapi({ description: "each asset the customer has an account in, by asset code" }),
  })
  .openapi("CustomerBalances");

const route = createRoute({
  method: "get",
  path: "/v1/customers/{id}/balance",
  operationId: "getCustomerBalance",
  tags: ["usage"],
  summary: "A customer's balance now in each asset: posted, available, held in holds (admin, finance with marketplace_id; its marketplace)",
  security,
  middleware: [requireRole("admin", "finance", "marketplace")] as const,
  request: {
    params: z.object({ id: CustomerId }),
    query: z.strictObject({
      marketplace_id: MarketplaceId.optional().openapi({ description: "admin and finance keys: required (customer ids are per marketplace)" }),
    }),
  },
  responses: { 200: json(CustomerBalances, "the customer's balances"), ...errorResponses },
});

const balanceOut = (b: CustomerBalance) => ({
  asset: b.asset,
  asset_id: b.assetId,
  account_id: b.accountId,
  posted: b.posted.toString(),
  posted_display: display(b.posted, b.scale),
  available: b.available.toString(),
  available_display: display(b.available, b.scale),
  held: b.held.toString(),
  held_display: display(b.held, b.scale),
  total: b.total.toString(),
  total_display: display(b.total, b.scale),
  credit_limit: b.creditLimit?.toString() ?? null,
  credit_limit_display: displayOrNull(b.creditLimit, b.scale),
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const db = c.get("deps").ledger.db;
    const party = await visibleCustomer(c, id, c.req.valid("query").marketplace_id);
    const asOf = db.clock.now();
    const data = (await readModel(c, (r) => customerBalances(r, party), { pointRead: true })).map(balanceOut);
    return c.json({ marketplace_id: party.marketplace.id, customer_id: id, billing: party.customer.billing, as_of: asOf.toISOString(), data }, 200);
  });
}
