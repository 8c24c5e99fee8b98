import type { Queryable } from "../../db/client.js";
import { checkPayoutPolicy, type PayoutPolicyInput } from "../payout-policies.js";
import { mayPropose, openOrInsert, type Proposal, type Proposing } from "./proposal.js";

/** Proposes an asset's payout policy (its caps and approval threshold decide how much leaves on one key's word). */
export async function proposePayoutPolicy(db: Queryable, { now, by, ...input }: Proposing<PayoutPolicyInput>): Promise<Proposal> {
  mayPropose(by, "payout_policy");
  const asset = await checkPayoutPolicy(db, input);
  const opt = (v: bigint | null | undefined) => (v == null ? null : v.toString());
  const payload = {
    asset: asset.code,
    asset_id: asset.id,
    min_amount: input.minAmount.toString(),
    schedule: input.schedule,
    interval_seconds: input.intervalSeconds ?? null,
    max_gas_share_bps: input.maxGasShareBps ?? null,
    max_per_payout: opt(input.maxPerPayout),
    max_per_day: opt(input.maxPerDay),
    approval_threshold: opt(input.approvalThreshold),
  };
  return openOrInsert(db, now, by, "payout_policy", null, payload);
}
