import type { Database, Queryable } from "../../db/client.js";
import { lockOpenUsageReversal } from "../../db/queries/proposals.js";
import { getUsage } from "../../db/queries/usage.js";
import type { Principal } from "../../domain/access.js";
import { LedgerError } from "../../domain/errors.js";
import { reverseUsages } from "../reverse-usage.js";
import { decide, type Decider } from "./decision.js";
import { getProposal, mayPropose, openOrInsert, toProposal, type Proposal } from "./proposal.js";
import { mayDecide } from "./decision.js";
import type { UsageRecord } from "../../domain/usage.js";

/**
 * An admin's reversal of a usage record whose earnings were already paid out (docs/ledger.md,
 * "Clawbacks"): the operator would owe them back, so it waits for another key's approval, as an
 * upheld dispute does (opened by one key, decided by another). A reversal the operator's payable
 * still covers is carried out at once (POST /v1/usage/{id}/reverse).
 */
export async function proposeUsageReversal(tx: Queryable, now: Date, by: Principal, usage: UsageRecord, reason: string): Promise<Proposal> {
  mayPropose(by, "usage_reversal");
  // A record is reversed once: while a reversal of it is proposed, that proposal answers (whoever
  // proposed it, whatever its reason), rather than a second one left open after the first is carried out.
  const open = await lockOpenUsageReversal(tx, usage.id);
  if (open) return toProposal(open);
  return openOrInsert(tx, now, by, "usage_reversal", usage.marketplaceId, {
    usage_id: usage.id,
    marketplace_id: usage.marketplaceId,
    operator_id: usage.operatorId,
    asset_id: usage.assetId,
    net: usage.net.toString(),
    reason,
  });
}

/** Carries an approved usage_reversal out: the reversal and its clawback, and the decision, in one transaction. */
export async function approveUsageReversal(db: Database, p: Proposal, by: Decider, reason: string | null): Promise<Proposal> {
  const usage = await getUsage(db, String(p.payload.usage_id));
  if (!usage) throw new LedgerError("usage_not_found", `usage record ${String(p.payload.usage_id)} does not exist`);
  const key = `usage-reverse:${usage.id}:proposal:${p.id}`;
  let decided: Proposal | undefined;
  const [r] = await reverseUsages(db, [{ usage, reason: String(p.payload.reason), idempotencyKey: key }], {
    clawbackKey: key,
    afterWrite: async (tx, outcomes, bookedAt) => {
      const locked = (await getProposal(tx, p.id, true))!;
      mayDecide(locked, by);
      const last = outcomes[outcomes.length - 1];
      if (last?.kind !== "created") throw new LedgerError("proposal_decided", `proposal ${p.id} was carried out already`);
      decided = await decide(tx, p.id, "approved", by, bookedAt, reason, { reversal_transfer_id: last.transfer.id });
    },
  });
  if (!decided) throw new LedgerError("already_reversed", `usage record ${r!.record.id} was already reversed`);
  return decided;
}
