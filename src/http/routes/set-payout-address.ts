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
import { ProposalOut, proposalOut } from "./proposal-schemas.js";

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
    current_address_signature: z
      .string()
      .regex(/^0x[0-9a-fA-F]{130}$/, "must be a 0x-prefixed 65-byte hex signature")
      .optional()
      .openapi({
        description:
          "the operator's current payout address's signature of the same challenge message (its address on this chain; for a first address on this chain, its address on another chain): its holder agrees, and the change takes effect at once. Without it a change becomes a payout_address proposal (202)",
        example: "0x9c1e2f0b4d7a3e5c8b6f1a2d4e7c9b0a3f5e8d1c2b4a6f9e0d3c5b7a1e4f8d2c6b9a0e3d5f7c1b4a8e2d6f0c3b5a9e1d4f7c2b6a0e8d3f5c1b7a4e9d2f6c0b3a1c",
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
  description:
    "Each change is recorded with who made it. Payouts already requested keep the address they were requested with. " +
    "One key does not decide alone where an operator's money goes: the address is set at once (200) when the operator's current payout address also signs the challenge (current_address_signature: its address on this chain, or on another chain for a first address here), " +
    "or when the operator is new (never had a payout address, never earned) and sets it with its own key. " +
    "Any other change is answered 202 with a payout_address proposal that an independent admin or finance key approves (POST /v1/proposals/{id}/approve).",
  middleware: [requireRole("admin", "operator"), jsonBodyGuard] as const,
  request: { params: z.object({ id: OperatorId }), body: jsonBody(Body) },
  responses: {
    200: json(Out, "the verified address"),
    202: json(ProposalOut, "the change waits for an independent key's approval"),
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    await visibleOperator(c, id);
    const deps = c.get("deps");
    return idempotently(c, body, async (tx) => {
      const r = await setPayoutAddress(
        tx,
        deps.settlements,
        {
          operatorId: id,
          chainId: BigInt(body.chain_id),
          address: body.address,
          challengeId: body.challenge_id,
          signature: body.signature,
          currentAddressSignature: body.current_address_signature,
          by: c.get("principal"),
          requestId: c.get("requestId"),
        },
        deps.ledger.db.clock.now(),
      );
      if (r.kind === "proposed") return { status: 202, body: proposalOut(r.proposal) };
      const a = r.address;
      const out = { operator_id: a.operatorId, chain_id: Number(a.chainId), address: a.address, verified_at: a.verifiedAt.toISOString(), changed: a.changed };
      return { status: 200, body: out };
    }) as never;
  });
}
