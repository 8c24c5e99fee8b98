import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { depositForCustomer } from "../../services/customer-deposits.js";
import { getCustomer } from "../../services/marketplaces.js";
import type { Transfer as TransferRecord } from "../../domain/posting.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { replayOrRun } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { ApiError } from "../problem.js";
import { Amount, AssetCode } from "../money-schemas.js";
import { Metadata, Transfer } from "../schemas.js";
import { assetScales, codeScale } from "../scales.js";
import { legAssets, transferOut } from "../serialize.js";
import { actingMarketplace } from "../tenancy.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { CustomerId, MarketplaceId } from "./party-schemas.js";

const Body = z
  .strictObject({
    asset: AssetCode,
    amount: Amount,
    marketplace_id: MarketplaceId.optional().openapi({ description: "admin keys only" }),
    metadata: Metadata.optional(),
  })
  .openapi("DepositCreate");

const route = createRoute({
  method: "post",
  path: "/v1/customers/{id}/deposits",
  operationId: "createDeposit",
  tags: ["usage"],
  summary: "Credit funds a marketplace received for its customer (admin, marketplace)",
  security,
  middleware: [requireRole("admin", "marketplace"), jsonBodyGuard] as const,
  request: { params: z.object({ id: CustomerId }), headers: IdempotencyHeader, body: jsonBody(Body) },
  responses: { 201: json(Transfer, "the deposit transfer"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    const marketplaceId = await actingMarketplace(c, body.marketplace_id);
    const deps = c.get("deps");
    return replayOrRun(c, body, async (ledgerKey, receipts) => {
      if (!(await getCustomer(deps.ledger.db, marketplaceId, id))) throw new ApiError("customer_not_found", `customer ${id} does not exist`);
      // The deposit moves money in this asset only: with its scale (read once per process: an asset's
      // scale never changes), the answer is made in the write's transaction. An unknown asset is
      // refused by the write.
      const known = await codeScale(deps.ledger.db, body.asset);
      const result = await depositForCustomer(deps.ledger, {
        marketplaceId,
        customerId: id,
        asset: body.asset,
        amount: BigInt(body.amount),
        metadata: body.metadata,
        idempotencyKey: ledgerKey("deposit"),
        receipt: known ? receipts.answered(201, (t: TransferRecord) => transferOut(t, known)) : receipts.audited<TransferRecord>(201),
      });
      if (!result.ok) throw ApiError.from(result.error);
      const scales = known ?? (await assetScales(deps.ledger.db, legAssets([result.transfer])));
      return { status: 201, body: transferOut(result.transfer, scales), receipt: result.replayed ? undefined : known ? "answer" : "audit" };
    }) as never;
  });
}
