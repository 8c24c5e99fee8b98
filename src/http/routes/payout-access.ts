import type { Context } from "hono";
import { getPayout, type Payout } from "../../services/payouts.js";
import type { AppEnv } from "../request-context.js";
import { ApiError } from "../problem.js";

/** A payout the key may see: admin and finance any, an operator its own (others are 404). */
export async function visiblePayout(c: Context<AppEnv>, id: string): Promise<Payout> {
  const p = c.get("principal");
  const payout = await getPayout(c.get("deps").ledger.db, id);
  if (!payout || (p.role === "operator" && payout.operatorId !== p.scopeId) || p.role === "marketplace") {
    throw new ApiError("payout_not_found", `payout ${id} does not exist`);
  }
  return payout;
}

/** The operator a payout request is for: an operator key's own (naming another is 404); admin and finance must name one. */
export function actingOperator(c: Context<AppEnv>, given: string | undefined): string {
  const p = c.get("principal");
  if (p.role === "operator") {
    // Another operator looks like a missing one: ids cannot be probed.
    if (given !== undefined && given !== p.scopeId)
      throw new ApiError("operator_not_found", `operator ${given} does not exist`, [{ path: "operator_id", message: "does not exist" }]);
    return p.scopeId!;
  }
  if (given === undefined) throw new ApiError("invalid_request", `${p.role} keys must name the operator_id`, [{ path: "operator_id", message: "is required" }]);
  return given;
}
