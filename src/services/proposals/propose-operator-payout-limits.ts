import type { Queryable } from "../../db/client.js";
import { operatorExists } from "../../db/queries/parties.js";
import { LedgerError } from "../../domain/errors.js";
import { isTransferAmount } from "../../domain/money.js";
import { mayPropose, openOrInsert, requireAsset, type Proposal, type Proposing } from "./proposal.js";

/** Proposes an operator's own payout caps in an asset (on top of the asset's policy; the lower cap applies). */
export async function proposeOperatorPayoutLimits(
  db: Queryable,
  { now, by, ...input }: Proposing<{ operatorId: string; asset: string; maxPerPayout: bigint | null; maxPerDay: bigint | null }>,
): Promise<Proposal> {
  mayPropose(by, "operator_payout_limits");
  if (!(await operatorExists(db, input.operatorId))) {
    throw new LedgerError("operator_not_found", `operator ${input.operatorId} does not exist`);
  }
  const asset = await requireAsset(db, input.asset);
  for (const [field, cap] of [
    ["max_per_payout", input.maxPerPayout],
    ["max_per_day", input.maxPerDay],
  ] as const) {
    if (cap !== null && !isTransferAmount(cap))
      throw new LedgerError("invalid_request", `${field} must be a positive integer of at most 2^256 - 1`, [{ path: field, message: "out of range" }]);
  }
  const payload = {
    operator_id: input.operatorId,
    asset: asset.code,
    asset_id: asset.id,
    max_per_payout: input.maxPerPayout?.toString() ?? null,
    max_per_day: input.maxPerDay?.toString() ?? null,
  };
  return openOrInsert(db, now, by, "operator_payout_limits", null, payload);
}
