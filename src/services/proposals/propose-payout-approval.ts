import type { Queryable } from "../../db/client.js";
import { insertPayoutApprovalProposal } from "../../db/queries/proposals.js";
import { uuidv7 } from "../../domain/ids.js";
import { toProposal, type Proposal, type Proposing } from "./proposal.js";

/** The approval a payout above its policy's threshold waits for; written with the payout. */
export async function proposePayoutApproval(
  tx: Queryable,
  { now, by: requestedBy, ...input }: Proposing<{ payoutId: string; operatorId: string; asset: string; amount: bigint }, string>,
): Promise<Proposal> {
  const row = await insertPayoutApprovalProposal(tx, {
    id: uuidv7(),
    payload: { payout_id: input.payoutId, operator_id: input.operatorId, asset: input.asset, amount: input.amount.toString() },
    proposedBy: requestedBy,
    proposedAt: now,
  });
  return toProposal(row);
}
