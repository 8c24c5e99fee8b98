import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { getAssetByCode } from "../../services/reads.js";
import { getOperatorPayoutLimits, getPayoutPolicy, lowerCap } from "../../services/payout-policies.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { DisplayAmount, displayOrNull } from "../display.js";
import { ApiError } from "../problem.js";
import { AssetCode } from "../money-schemas.js";
import { errorResponses, json, security } from "./common.js";
import { visibleOperator } from "./operator-access.js";
import { OperatorId } from "./party-schemas.js";

const Cap = z.string().nullable().openapi({ description: "smallest units; null: no cap" });
const CapDisplay = DisplayAmount.nullable();
const Limits = z
  .object({
    operator_id: z.string(),
    asset: z.string(),
    max_per_payout: Cap.openapi({ description: "in force: the lower of the operator's own cap and the policy's (smallest units; null: none)" }),
    max_per_payout_display: CapDisplay,
    max_per_day: Cap.openapi({ description: "in force: the lower of the operator's own cap and the policy's (smallest units; null: none)" }),
    max_per_day_display: CapDisplay,
    own: z.object({
      max_per_payout: Cap,
      max_per_payout_display: CapDisplay,
      max_per_day: Cap,
      max_per_day_display: CapDisplay,
      proposal_id: z.string().nullable(),
      updated_at: z.string().nullable(),
    }),
    policy: z.object({ max_per_payout: Cap, max_per_payout_display: CapDisplay, max_per_day: Cap, max_per_day_display: CapDisplay }),
  })
  .openapi("OperatorPayoutLimits");

const route = createRoute({
  method: "get",
  path: "/v1/operators/{id}/payout-limits/{asset}",
  operationId: "getOperatorPayoutLimits",
  tags: ["payouts"],
  summary: "The payout caps in force for an operator in an asset: its own and the policy's (admin, finance, the operator)",
  security,
  middleware: [requireRole("admin", "finance", "operator")] as const,
  request: { params: z.object({ id: OperatorId, asset: AssetCode }) },
  responses: { 200: json(Limits, "the caps"), ...errorResponses },
});

const str = (v: bigint | null) => (v === null ? null : v.toString());

/** Two caps, each with its display twin at the asset's scale. */
const capsOut = (perPayout: bigint | null, perDay: bigint | null, scale: number) => ({
  max_per_payout: str(perPayout),
  max_per_payout_display: displayOrNull(perPayout, scale),
  max_per_day: str(perDay),
  max_per_day_display: displayOrNull(perDay, scale),
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id, asset: code } = c.req.valid("param");
    await visibleOperator(c, id);
    const db = c.get("deps").ledger.db;
    const asset = await getAssetByCode(db, code);
    if (!asset) throw new ApiError("asset_not_found", `asset ${code} does not exist`);
    const [own, policy] = await Promise.all([getOperatorPayoutLimits(db, id, asset.id), getPayoutPolicy(db, asset.id)]);
    return c.json(
      {
        operator_id: id,
        asset: asset.code,
        ...capsOut(lowerCap(policy.maxPerPayout, own.maxPerPayout), lowerCap(policy.maxPerDay, own.maxPerDay), asset.scale),
        own: { ...capsOut(own.maxPerPayout, own.maxPerDay, asset.scale), proposal_id: own.proposalId, updated_at: own.updatedAt?.toISOString() ?? null },
        policy: capsOut(policy.maxPerPayout, policy.maxPerDay, asset.scale),
      },
      200,
    );
  });
}
