import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { getCustomer } from "../../services/marketplaces.js";
import { listDepositAddresses } from "../../services/reads.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { ApiError } from "../problem.js";
import { CursorQuery, page } from "../schemas.js";
import { errorResponses, json, security } from "./common.js";
import { customerMarketplace } from "./party-access.js";
import { CustomerId, MarketplaceId } from "./party-schemas.js";

const DepositAddressEntry = z
  .object({
    chain_id: z.number().int().openapi({ example: 31337 }),
    address: z.string().openapi({ example: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8" }),
    registered_by: z.string().openapi({ description: "the API key that registered it", example: "01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e" }),
    registered_at: z.string().openapi({ example: "2026-11-30T12:00:00.000Z" }),
  })
  .openapi("DepositAddressEntry");

const Query = CursorQuery.extend({
  marketplace_id: MarketplaceId.optional().openapi({ description: "admin and finance keys: required (customer ids are per marketplace)" }),
});

const route = createRoute({
  method: "get",
  path: "/v1/customers/{id}/deposit-addresses",
  operationId: "listDepositAddresses",
  tags: ["usage"],
  summary: "The addresses a customer's on-chain deposits are credited from, by chain and address (admin, finance with marketplace_id; its marketplace)",
  security,
  middleware: [requireRole("admin", "finance", "marketplace")] as const,
  request: { params: z.object({ id: CustomerId }), query: Query },
  responses: { 200: json(page(DepositAddressEntry, "DepositAddressPage"), "a page of the customer's deposit addresses"), ...errorResponses },
});

/** A cursor is `<chain_id>:<address>` of the last address of a page. */
function decodeCursor(cursor: string | undefined): { chainId: bigint; address: string } | undefined {
  if (cursor === undefined) return undefined;
  const m = /^([0-9]{1,20}):(0x[0-9a-fA-F]{40})$/.exec(cursor);
  if (!m) throw new ApiError("invalid_request", "cursor is not one this API returned", [{ path: "cursor", message: "invalid" }]);
  return { chainId: BigInt(m[1]!), address: m[2]! };
}

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const q = c.req.valid("query");
    const after = decodeCursor(q.cursor);
    const marketplaceId = customerMarketplace(c, q.marketplace_id);
    const db = c.get("deps").ledger.db;
    // Another marketplace's customer is answered as a missing one, without reading it.
    if (marketplaceId === undefined || !(await getCustomer(db, marketplaceId, id))) throw new ApiError("customer_not_found", `customer ${id} does not exist`);
    const rows = await listDepositAddresses(db, { marketplaceId, customerId: id, after, limit: q.limit + 1 });
    const items = rows.slice(0, q.limit);
    const last = items[items.length - 1];
    return c.json(
      {
        data: items.map((r) => ({
          chain_id: Number(r.chain_id),
          address: r.address,
          registered_by: r.created_by,
          registered_at: new Date(r.created_at).toISOString(),
        })),
        next_cursor: rows.length > q.limit ? `${last!.chain_id}:${last!.address}` : null,
        limit: q.limit,
      },
      200,
    );
  });
}
