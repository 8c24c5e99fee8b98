import type { Queryable } from "../../db/client.js";
import { insertPayoutApprovalProposal } from "../../db/queries/proposals.js";
import { uuidv7 } from "../../domain/ids.js";
import { toProposal, type Proposal, type Proposing } from "./proposal.js";

/** Where a payout goes: how it settles, and on chain, the chain and the address (which cannot change once the payout is written). */
export interface PayoutDestination {
  settlement: "evm" | "none" | "convert";
  chainId: bigint | null;
  toAddress: string | null;
}

/**
 * The approval a payout above its policy's threshold waits for; written with the payout. It names
 * where the payout goes, so that the key approving it sees the chain and address it approves.
 */
export async function proposePayoutApproval(
  tx: Queryable,
  {
    now,
    by: requestedBy,
    ...input
  }: Proposing<{ payoutId: string; operatorId: string; asset: string; amount: bigint; destination: PayoutDestination }, string>,
): Promise<Proposal> {
  const { settlement, chainId, toAddress } = input.destination;
  const row = await insertPayoutApprovalProposal(tx, {
    id: uuidv7(),
    payload: {
      payout_id: input.payoutId,
      operator_id: input.operatorId,
      asset: input.asset,
      amount: input.amount.toString(),
      settlement,
      chain_id: chainId === null ? null : chainId.toString(),
      to_address: toAddress,
    },
    proposedBy: requestedBy,
    proposedAt: now,
  });
  return toProposal(row);
}
