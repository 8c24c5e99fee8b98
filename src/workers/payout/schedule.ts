import { listOperatorsWithAvailablePayable } from "../../db/queries/payouts.js";
import { LedgerError } from "../../domain/errors.js";
import { scheduleWindow } from "../../domain/payouts.js";
import { payableNow, withheldEarnings } from "../../services/funding.js";
import { getOperatorPayoutLimits, lowerCap, scheduledPolicies } from "../../services/payout-policies.js";
import { createPayout } from "../../services/payouts.js";
import type { PayoutContext } from "./context.js";

/** Creates the payouts that policies with an interval schedule call for, once per operator and window. */
export async function schedule(ctx: PayoutContext): Promise<number> {
  let created = 0;
  for (const policy of await scheduledPolicies(ctx.db)) {
    const window = scheduleWindow(ctx.now(), policy.intervalSeconds!);
    const due = await listOperatorsWithAvailablePayable(ctx.db, policy.assetId, policy.minAmount);
    for (const d of due) {
      // What is payable now: earnings whose money has not been received wait, and so do what
      // disputes hold and what the operator owes back (src/services/funding.ts).
      const payable = payableNow(BigInt(d.available), await withheldEarnings(ctx.db, d.operator_id, policy.assetId));
      if (payable < policy.minAmount) continue;
      const cap = lowerCap(policy.maxPerPayout, (await getOperatorPayoutLimits(ctx.db, d.operator_id, policy.assetId)).maxPerPayout);
      try {
        const { replayed } = await createPayout(ctx.db, ctx.settlements, {
          // At most the largest payout (the policy's or the operator's); a daily cap that is reached refuses it until the next window.
          operatorId: d.operator_id,
          asset: policy.assetCode,
          trigger: "schedule",
          requestedBy: "scheduler",
          amount: cap !== null && cap < payable ? cap : payable,
          idempotencyKey: `payout-schedule:${policy.assetId}:${d.operator_id}:${window}`,
        });
        if (!replayed) created++;
      } catch (err) {
        // This window's payout exists already (for another amount), or the operator cannot be paid yet.
        if (err instanceof LedgerError) ctx.log.debug({ worker: "payouts", operator: d.operator_id, code: err.code }, "no scheduled payout");
        else throw err;
      }
    }
  }
  return created;
}
