import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { setPayoutAddress } from "../../services/payout-addresses.js";
import { requireRole } from "../auth.js";
import { idempotently } from "../idempotency.js";
import type { AppEnv } from "../request-context.js";
import { jsonBodyGuard } from "../json-body.js";
import { Timestamp, Uuid } from "../schemas.js";
import { errorResponses, json, jsonBody, security } from "./common.js";
import { visibleOperator } from "./operator-access.js";
import { OperatorId } from "./party-schemas.js";
import { ChainId, EvmAddress } from "./payout-schemas.js";

const Body = z
  .strictObject({
    chain_id: ChainId,
    address: EvmAddress,
    challenge_id: Uuid,
    signature: z
      .string()
      .regex(/^0x[0-9a-fA-F]{130}$/, "must be a 0x-prefixed 65-byte hex signature")
      .openapi({
        description: "the address's signature of the challenge message",
        example: "0x4a427adf9d64b3f2eb303a268a262834e1a90a02ff2b5cb67e18a1ee5becf2a74fb09737851906dfa9ba33b4a7159e404b0543140031503d787d73306679da5b1c",
      }),
  })
  .openapi("PayoutAddressSet");

const Out = z
  .object({ operator_id: z.string(), chain_id: z.number().int(), address: z.string(), verified_at: Timestamp, changed: z.boolean() })
  .openapi("PayoutAddress");

const route = createRoute({
  method: "put",
  path: "/v1/operators/{id}/payout-address",
  operationId: "setPayoutAddress",
  tags: ["operators"],
  summary: "Set the operator's payout address on a chain, proven by signing a challenge (the operator, admin)",
  security,
  description: "Each change is recorded with who made it. Payouts already requested keep the address they were requested with.",
  middleware: [requireRole("admin", "operator"), jsonBodyGuard] as const,
  request: { params: z.object({ id: OperatorId }), body: jsonBody(Body) },
  responses: { 200: json(Out, "the verified address"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    await visibleOperator(c, id);
    const deps = c.get("deps");
    return idempotently(c, body, async (tx) => {
      const a = await setPayoutAddress(
        tx,
        deps.settlements,
        {
          operatorId: id,
          chainId: BigInt(body.chain_id),
          address: body.address,
          challengeId: body.challenge_id,
          signature: body.signature,
          changedBy: c.get("principal").keyId,
          requestId: c.get("requestId"),
        },
        deps.ledger.db.clock.now(),
      );
      const out = { operator_id: a.operatorId, chain_id: Number(a.chainId), address: a.address, verified_at: a.verifiedAt.toISOString(), changed: a.changed };
      return { status: 200, body: out };
    }) as never;
  });
}
