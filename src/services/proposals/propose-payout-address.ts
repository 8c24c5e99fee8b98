import type { Queryable } from "../../db/client.js";
import type { Principal } from "../../domain/access.js";
import { mayPropose, openOrInsert, type Proposal } from "./proposal.js";

/**
 * A change of an operator's payout address that one key may not make alone (src/services/payout-addresses.ts):
 * the address proved by its signature, waiting for an independent key's approval.
 */
export async function proposePayoutAddress(
  tx: Queryable,
  now: Date,
  by: Principal,
  payload: {
    operator_id: string;
    chain_id: string;
    last_change_id: string | null;
    old_address: string | null;
    new_address: string;
    challenge_id: string;
    signature: string;
  },
): Promise<Proposal> {
  mayPropose(by, "payout_address");
  return openOrInsert(tx, now, by, "payout_address", null, payload);
}
