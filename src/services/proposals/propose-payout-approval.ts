import type { Queryable } from "../../db/client.js";
import { insertPayoutApprovalProposal } from "../../db/queries/proposals.js";
import { uuidv7 } from "../../domain/ids.js";
import { toProposal, type Proposal } from "./proposal.js";

/** The approval a payout above its policy's threshold waits for; written with the payout. */
export async function proposePayoutApproval(
  tx: Queryable,
  now: Date,
  requestedBy: string,
  input: { payoutId: string; operatorId: string; asset: string; amount: bigint },
): Promise<Proposal> {
  const row = await insertPayoutApprovalProposal(tx, {
    id: uuidv7(),
    payload: { payout_id: input.payoutId, operator_id: input.operatorId, asset: input.asset, amount: input.amount.toString() },
    proposedBy: requestedBy,
    proposedAt: now,
  });
  return toProposal(row);
}
