import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { getAssetByCode } from "../../services/reads.js";
import { marketplaceFunding } from "../../services/funding.js";
import { getMarketplace } from "../../services/marketplaces.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
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
    settled: z.string().openapi({ description: "its settlements: receipts from the marketplace" }),
    credit_limit: z.string().openapi({ description: "what the platform advances to operators of its usage not yet paid for (default 0)" }),
    claimed_unsettled: z.string().openapi({
      description: "deposits it claimed for its customers off-chain less its settlements: money it holds for the platform (negative: settled ahead)",
    }),
    usage_gross: z.string().openapi({ description: "gross of its usage not reversed" }),
    awaiting_gross: z.string().openapi({
      description: "of that gross, what money received and the credit limit do not cover yet: what it owes before its operators can be paid for it",
    }),
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
        settled: f.settled.toString(),
        credit_limit: f.creditLimit.toString(),
        claimed_unsettled: f.claimedUnsettled.toString(),
        usage_gross: f.usageGross.toString(),
        awaiting_gross: f.awaitingGross.toString(),
      },
      200,
    );
  });
}
