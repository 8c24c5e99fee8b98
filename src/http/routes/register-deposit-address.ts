import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { registerDepositAddress } from "../../services/chain-deposits.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { actingMarketplace } from "../tenancy.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { CustomerId, MarketplaceId } from "./party-schemas.js";
import { ChainId, EvmAddress } from "./payout-schemas.js";

const Body = z
  .strictObject({
    chain_id: ChainId,
    address: EvmAddress,
    signature: z
      .string()
      .regex(/^0x[0-9a-fA-F]{130}$/, "must be a 0x-prefixed 65-byte hex signature")
      .openapi({
        description:
          'the address\'s EIP-191 signature of: "Settlement ledger: register deposit address\\nMarketplace: {marketplace}\\nCustomer: {customer}\\nChain: {chain_id}\\nAddress: {checksummed address}"',
        example: "0x4a427adf9d64b3f2eb303a268a262834e1a90a02ff2b5cb67e18a1ee5becf2a74fb09737851906dfa9ba33b4a7159e404b0543140031503d787d73306679da5b1c",
      }),
    marketplace_id: MarketplaceId.optional().openapi({ description: "admin keys only" }),
  })
  .openapi("DepositAddressCreate");
const Out = z.object({ chain_id: z.number().int(), address: z.string(), marketplace_id: z.string(), customer_id: z.string() }).openapi("DepositAddress");

const route = createRoute({
  method: "post",
  path: "/v1/customers/{id}/deposit-addresses",
  operationId: "registerDepositAddress",
  tags: ["usage"],
  summary:
    "Register an address the customer pays into the treasury from, proven by its signature: its transfers are credited to the customer (admin, marketplace)",
  security,
  middleware: [requireRole("admin", "marketplace"), jsonBodyGuard] as const,
  request: { params: z.object({ id: CustomerId }), headers: IdempotencyHeader, body: jsonBody(Body) },
  responses: { 201: json(Out, "registered"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    const marketplaceId = await actingMarketplace(c, body.marketplace_id);
    const deps = c.get("deps");
    return idempotently(c, body, async (tx) => {
      const d = await registerDepositAddress(tx, deps.settlements, {
        marketplaceId,
        customerId: id,
        chainId: BigInt(body.chain_id),
        address: body.address,
        signature: body.signature,
        createdBy: c.get("principal").keyId,
      });
      return { status: 201, body: { chain_id: Number(d.chainId), address: d.address, marketplace_id: d.marketplaceId, customer_id: d.customerId } };
    }) as never;
  });
}
