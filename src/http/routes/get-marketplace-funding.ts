import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { getAssetByCode } from "../../services/reads.js";
import { marketplaceFunding } from "../../services/funding.js";
import { getMarketplace } from "../../services/marketplaces.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { display, DisplayAmount } from "../display.js";
import { ApiError } from "../problem.js";
import { canReadMarketplace } from "../tenancy.js";
import { AssetCode } from "../money-schemas.js";
import { errorResponses, json, security } from "./common.js";
import { MarketplaceId } from "./party-schemas.js";

const Funding = z
  .object({
    marketplace_id: z.string(),
    asset: z.string(),
    customers_received: z.string().openapi({ description: "its customers' own money received: on-chain deposits and receipts recorded for a customer" }),
    customers_received_display: DisplayAmount,
    settled: z.string().openapi({ description: "its settlements: receipts from the marketplace" }),
    settled_display: DisplayAmount,
    credit_limit: z.string().openapi({ description: "what the platform advances to operators of its usage not yet paid for (default 0)" }),
    credit_limit_display: DisplayAmount,
    claimed_unsettled: z.string().openapi({
      description: "deposits it claimed for its customers off-chain less its settlements: money it holds for the platform (negative: settled ahead)",
    }),
    claimed_unsettled_display: DisplayAmount,
    usage_gross: z.string().openapi({ description: "gross of its usage not reversed" }),
    usage_gross_display: DisplayAmount,
    awaiting_gross: z.string().openapi({
      description: "of that gross, what money received and the credit limit do not cover yet: what it owes before its operators can be paid for it",
    }),
    awaiting_gross_display: DisplayAmount,
  })
  .openapi("MarketplaceFunding");

const route = createRoute({
  method: "get",
  path: "/v1/marketplaces/{id}/funding/{asset}",
  operationId: "getMarketplaceFunding",
  tags: ["funding"],
  summary: "How much of a marketplace's usage is paid for (admin, finance, that marketplace)",
  security,
  middleware: [requireRole("admin", "finance", "marketplace")] as const,
  request: { params: z.object({ id: MarketplaceId, asset: AssetCode }) },
  responses: { 200: json(Funding, "the marketplace's funding in the asset"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id, asset: code } = c.req.valid("param");
    const db = c.get("deps").ledger.db;
    if (!canReadMarketplace(c, id) || !(await getMarketplace(db, id))) throw new ApiError("marketplace_not_found", `marketplace ${id} does not exist`);
    const asset = await getAssetByCode(db, code);
    if (!asset) throw new ApiError("asset_not_found", `asset ${code} does not exist`, [{ path: "asset", message: "does not exist" }]);
    const f = await marketplaceFunding(db, id, asset.id);
    return c.json(
      {
        marketplace_id: id,
        asset: asset.code,
        customers_received: f.customersReceived.toString(),
        customers_received_display: display(f.customersReceived, asset.scale),
        settled: f.settled.toString(),
        settled_display: display(f.settled, asset.scale),
        credit_limit: f.creditLimit.toString(),
        credit_limit_display: display(f.creditLimit, asset.scale),
        claimed_unsettled: f.claimedUnsettled.toString(),
        claimed_unsettled_display: display(f.claimedUnsettled, asset.scale),
        usage_gross: f.usageGross.toString(),
        usage_gross_display: display(f.usageGross, asset.scale),
        awaiting_gross: f.awaitingGross.toString(),
        awaiting_gross_display: display(f.awaitingGross, asset.scale),
      },
      200,
    );
  });
}
