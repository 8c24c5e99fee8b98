import type { Database } from "../../db/client.js";
import { LedgerError } from "../../domain/errors.js";
import { failPayouts } from "../fail-payouts.js";
import { decide, type Decider, mayDecide } from "./decision.js";
import { getProposal, type Proposal } from "./proposal.js";

export async function rejectProposal(db: Database, { id, by, reason }: { id: string; by: Decider; reason: string }): Promise<Proposal> {
  const p = await getProposal(db, id);
  if (!p) throw new LedgerError("proposal_not_found", `proposal ${id} does not exist`);
  mayDecide(p, by); // rejecting moves no money: another key than the proposer's is enough
  if (p.kind === "payout") {
    // A payout refused is ended: its hold is voided and the amount is the operator's again.
    let decided: Proposal | undefined;
    await failPayouts(db, {
      ids: [String(p.payload.payout_id)],
      reason: `rejected by a second key: ${reason}`,
      from: ["pending"],
      alsoInTx: async (tx) => {
        mayDecide((await getProposal(tx, id, true))!, by);
        decided = await decide(tx, id, "rejected", by, db.clock.now(), reason, null);
      },
    });
    if (decided) return decided;
  }
  return db.transaction(async (tx) => {
    mayDecide((await getProposal(tx, id, true))!, by);
    return decide(tx, id, "rejected", by, db.clock.now(), reason, null);
  });
}
