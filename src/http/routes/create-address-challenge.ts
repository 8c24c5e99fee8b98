import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { issueAddressChallenge } from "../../services/payout-addresses.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { Timestamp, Uuid } from "../schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { visibleOperator } from "./operator-access.js";
import { OperatorId } from "./party-schemas.js";
import { ChainId, EvmAddress } from "./payout-schemas.js";

const Body = z.strictObject({ chain_id: ChainId, address: EvmAddress }).openapi("PayoutAddressChallengeCreate");

const Out = z
  .object({
    id: Uuid,
    operator_id: z.string(),
    chain_id: z.number().int(),
    address: z.string(),
    message: z.string().openapi({ description: "sign this exact text with the address (EIP-191 personal_sign)" }),
    expires_at: Timestamp,
  })
  .openapi("PayoutAddressChallenge");

const route = createRoute({
  method: "post",
  path: "/v1/operators/{id}/payout-address-challenges",
  operationId: "createPayoutAddressChallenge",
  tags: ["operators"],
  summary: "Get a message to sign with the address the operator wants to be paid to (the operator, admin)",
  security,
  middleware: [requireRole("admin", "operator"), jsonBodyGuard] as const,
  request: { params: z.object({ id: OperatorId }), headers: IdempotencyHeader, body: jsonBody(Body) },
  responses: { 201: json(Out, "sign its message, then PUT the payout address with the signature"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    await visibleOperator(c, id);
    const deps = c.get("deps");
    return idempotently(c, body, async (tx) => {
      const ch = await issueAddressChallenge(tx, deps.settlements, {
        operatorId: id,
        chainId: BigInt(body.chain_id),
        address: body.address,
        now: deps.ledger.db.clock.now(),
      });
      return {
        status: 201,
        body: {
          id: ch.id,
          operator_id: ch.operatorId,
          chain_id: Number(ch.chainId),
          address: ch.address,
          message: ch.message,
          expires_at: ch.expiresAt.toISOString(),
        },
      };
    }) as never;
  });
}
