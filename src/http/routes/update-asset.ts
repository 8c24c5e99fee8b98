import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { proposeAssetSettlement } from "../../services/proposals.js";
import { requireRole } from "../auth.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { AssetCode } from "../money-schemas.js";
import type { AppEnv } from "../request-context.js";
import { SettlementIn, toSettlementInput } from "./asset-schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { ProposalOut, proposalOut } from "./proposal-schemas.js";

const Body = z
  .strictObject({
    settlement: SettlementIn.openapi({
      description: "how the asset settles from the approval on: e.g. the token redeployed at a new address. A chain's native asset cannot change",
    }),
  })
  .openapi("AssetUpdate");

const route = createRoute({
  method: "patch",
  path: "/v1/assets/{code}",
  operationId: "updateAsset",
  tags: ["ledger"],
  summary: "Propose how an asset settles (its token, its chain) (admin); in force when another key approves it, with no payout of it on its way",
  description:
    "Where payouts go changes on two people's word: the answer is a proposal (202) that another, independent admin or finance key approves (POST /v1/proposals/{id}/approve). " +
    "Refused while payouts of the asset are pending, batched, signed or submitted (409 payouts_in_flight), at the proposal and again at the approval; " +
    "an approval after the asset changed otherwise is 409 proposal_outdated. The code and scale never change. Every version is kept: GET /v1/assets/{code}.",
  security,
  middleware: [requireRole("admin"), jsonBodyGuard] as const,
  request: { params: z.object({ code: AssetCode }), headers: IdempotencyHeader, body: jsonBody(Body) },
  responses: {
    202: json(
      ProposalOut,
      "the proposal (kind asset_settlement): the asset changes when another key approves it; the same change asked again answers the open one",
    ),
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { code } = c.req.valid("param");
    const body = c.req.valid("json");
    const db = c.get("deps").ledger.db;
    return idempotently(c, body, async (tx) => {
      const proposal = await proposeAssetSettlement(tx, {
        now: db.clock.now(),
        by: c.get("principal"),
        asset: code,
        settlement: toSettlementInput(body.settlement),
      });
      return { status: 202, body: proposalOut(proposal) };
    }) as never;
  });
}
