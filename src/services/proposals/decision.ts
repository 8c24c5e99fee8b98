import type { Queryable } from "../../db/client.js";
import { creatorsOfKey, recordDecision } from "../../db/queries/proposals.js";
import { writeReceipts, type WriteReceipt } from "../../db/queries/write-receipts.js";
import { holdKeysRevoked } from "../../db/queries/key-guard.js";
import { withArticle, type Principal } from "../../domain/access.js";
import { LedgerError } from "../../domain/errors.js";
import { PROPOSAL_ROLES, toProposal, type Proposal } from "./proposal.js";

/** Checks that `by` may decide the proposal: another key than the proposer's, of a role allowed to approve its kind, and still open. */
export function mayDecide(p: Proposal, by: Principal): void {
  if (p.status !== "proposed") throw new LedgerError("proposal_decided", `proposal ${p.id} was already ${p.status} by ${p.decidedBy}`);
  if (!PROPOSAL_ROLES[p.kind].approve.includes(by.role)) {
    throw new LedgerError(
      "forbidden",
      `${withArticle(by.role)} key may not decide ${withArticle(p.kind)} proposal; ${PROPOSAL_ROLES[p.kind].approve.join(" or ")} keys may`,
    );
  }
  if (p.proposedBy === by.keyId) throw new LedgerError("four_eyes", `proposal ${p.id} must be decided by another key than the one that proposed it`);
}

export const BOOTSTRAP_KEY = "bootstrap-admin";

/**
 * Four eyes means two people, and one person can hold several keys: whoever can create keys (an
 * admin) could create a second one to approve their own proposal. So the two keys must be
 * independent: neither created the other (directly or through keys it created), and they have no
 * creator in common other than the bootstrap key (which creates the people's first keys). The
 * bootstrap key itself takes part in no decision: every key descends from it. Proposals of the
 * scheduler (payouts above a threshold) have no key behind them.
 */
export async function independent(db: Queryable, p: Proposal, by: Principal): Promise<void> {
  if (p.proposedBy === "scheduler") return;
  await independentKeys(db, { what: `proposal ${p.id}`, first: p.proposedBy, verb: "proposed" }, by);
}

/**
 * The rule of `independent` for any decision of two keys (a proposal and its approval, a dispute
 * a platform key opened and its decision): `first` is the key that started it.
 */
export async function independentKeys(db: Queryable, subject: { what: string; first: string; verb: string }, by: Principal): Promise<void> {
  if (by.keyId === BOOTSTRAP_KEY || subject.first === BOOTSTRAP_KEY) {
    throw new LedgerError(
      "four_eyes",
      `the bootstrap admin key takes part in no four-eyes decision: every key was created through it; use the keys of two people`,
    );
  }
  const [mine, theirs] = await Promise.all([creatorsOfKey(db, by.keyId), creatorsOfKey(db, subject.first)]);
  const shared = mine.filter((k) => k !== BOOTSTRAP_KEY && (theirs.includes(k) || k === subject.first));
  if (shared.length > 0 || theirs.includes(by.keyId)) {
    throw new LedgerError(
      "four_eyes",
      `${subject.what} must be decided by a key independent of the one that ${subject.verb} it: one of the two keys was created by the other, or both by the same key`,
    );
  }
}

/** Who decides, with the receipt of the API call that decided (written with the decision). */
export type Decider = Principal & { receipt?: WriteReceipt<void> };

export async function decide(
  tx: Queryable,
  id: string,
  status: "approved" | "rejected",
  by: Decider,
  at: Date,
  reason: string | null,
  result: Record<string, unknown> | null,
): Promise<Proposal> {
  const row = await recordDecision(tx, { id, status, decidedBy: by.keyId, decidedAt: at, reason, result });
  if (!row) throw new LedgerError("proposal_decided", `proposal ${id} was decided by someone else meanwhile`);
  // What a revoked key proposed is not carried out: approving holds the proposer's key, as a write
  // made with it would (src/db/queries/key-guard.ts), so its revocation and the approval exclude
  // each other. Rejecting stays possible.
  if (status === "approved" && (await holdKeysRevoked(tx, [row.proposed_by])).size > 0) {
    throw new LedgerError(
      "proposal_outdated",
      `proposal ${id} was made with an API key that has been revoked since: reject it, and propose again with a current key if the change is still wanted`,
    );
  }
  if (by.receipt) await writeReceipts(tx, [{ receipt: by.receipt, result: undefined }], at);
  return toProposal(row);
}
