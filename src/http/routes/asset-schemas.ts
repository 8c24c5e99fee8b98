import { z } from "@hono/zod-openapi";
import type { SettlementVersion } from "../../services/asset-settings.js";
import { settlementWire } from "../../services/proposals.js";
import { Asset, Timestamp, Uuid } from "../schemas.js";

/** How an asset settles, as a body field (POST /v1/assets has its own, PATCH /v1/assets/{code} this one). */
export const SettlementIn = z
  .discriminatedUnion("kind", [
    z.strictObject({
      kind: z.literal("erc20"),
      chain_id: z.number().int().openapi({ example: 31337 }),
      token_address: z.string().openapi({ example: "0x5fbdb2315678afecb367f032d93f642f64180aa3" }),
    }),
    z.strictObject({ kind: z.literal("native"), chain_id: z.number().int() }),
    z.strictObject({ kind: z.literal("offchain") }),
  ])
  .openapi("AssetSettlementIn");

export const toSettlementInput = (s: z.infer<typeof SettlementIn>) =>
  s.kind === "erc20"
    ? { kind: s.kind, chainId: s.chain_id, tokenAddress: s.token_address }
    : s.kind === "native"
      ? { kind: s.kind, chainId: s.chain_id }
      : { kind: s.kind };

const SettlementVersionOut = z
  .object({
    version: z.number().int().openapi({ description: "1: as registered; each later version was approved by a second key" }),
    settlement: Asset.shape.settlement,
    valid_from: Timestamp,
    valid_to: Timestamp.nullable().openapi({ description: "when the next version took over; null for the one in force" }),
    proposal_id: Uuid.nullable().openapi({
      description: "the approved proposal that made this version (GET /v1/proposals/{id}: who proposed and approved it); null as registered",
    }),
  })
  .openapi("AssetSettlementVersion");

export const AssetWithHistory = Asset.extend({
  settlement_history: z.array(SettlementVersionOut).openapi({ description: "every version of how the asset settled, oldest first (kept for ever)" }),
}).openapi("AssetWithHistory");

export const settlementVersionOut = (v: SettlementVersion) => ({
  version: v.version,
  settlement: settlementWire(v.settlement),
  valid_from: v.validFrom.toISOString(),
  valid_to: v.validTo?.toISOString() ?? null,
  proposal_id: v.proposalId,
});
