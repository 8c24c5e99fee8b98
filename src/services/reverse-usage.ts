import type { WriteReceipt } from "../db/queries/write-receipts.js";
import { LedgerError } from "../domain/errors.js";
import type { Database, Queryable } from "../db/client.js";
import { getUsage } from "../db/queries/usage.js";
import { type UsageRecord } from "../domain/usage.js";
import { writeTransfers, type AfterWrite } from "../db/transfer-writer.js";
import { openDisputesOf } from "../db/queries/disputes.js";
import type { TransferInput } from "../domain/transfers.js";
import { chart } from "../domain/chart.js";
import { getAsset } from "../db/queries/assets.js";
import { getServiceAccountAvailable } from "../db/queries/accounts.js";
import { unitsToDecimal } from "../domain/money.js";
import { awaitingFunds, lockOperatorFunds, lockOperatorsFunds } from "./funding.js";
import { closeHold, getHold } from "./holds.js";
import { clawbackRequests } from "./receivables.js";
import { bookingOf } from "./periods.js";
import { dropQueuedPaid, sweepRateLocks } from "./rate-lock-sweep.js";
import { ownOpenShares, queuedAmong } from "../db/queries/rate-locks.js";

/**
 * A reversal takes the record's net back from the operator. What the operator was paid out must
 * stay covered by funded earnings: otherwise the record's money, returned to the customer, would
 * fund new usage and be paid out a second time. So the operator's available balance after the
 * reversal must still hold what waits for funds once the record is gone.
 */
async function keepsPaidOutFunded(tx: Queryable, usage: UsageRecord): Promise<void> {
  if (usage.status === "reversed") return; // answered as already reversed by the ledger
  await lockOperatorFunds(tx, usage.operatorId, usage.assetId);
  const available = await getServiceAccountAvailable(tx, usage.assetId, chart.operatorPayable(usage.assetId, usage.operatorId).ref);
  const after = (available ?? 0n) - usage.net;
  if (after < 0n) {
    // The payable's no-overdraft limit would refuse it: said here in the operator's terms.
    const asset = (await getAsset(tx, usage.assetId))!;
    throw new LedgerError(
      "exceeds_credits",
      `reversing usage record ${usage.id} would take back ${unitsToDecimal(usage.net, asset.scale)} ${asset.code} of operator ${usage.operatorId}'s earnings, ` +
        `but only ${unitsToDecimal(available ?? 0n, asset.scale)} is left on its payable: it has already been paid out or is being paid the rest; ` +
        "to take back earnings already paid, open a dispute (POST /v1/disputes): upheld by finance, the operator owes them back",
    );
  }
  const awaiting = await awaitingFunds(tx, usage.operatorId, usage.assetId, { withoutUsageId: usage.id });
  if (after < awaiting.total) {
    const asset = (await getAsset(tx, usage.assetId))!;
    throw new LedgerError(
      "exceeds_credits",
      `reversing usage record ${usage.id} would take back ${unitsToDecimal(usage.net, asset.scale)} ${asset.code} of operator ${usage.operatorId}'s funded earnings, ` +
        `which it has already been paid out or is being paid: what is left (${unitsToDecimal(after, asset.scale)}) is less than its earnings still awaiting funds (${unitsToDecimal(awaiting.total, asset.scale)}); ` +
        "to take back earnings already paid, open a dispute (POST /v1/disputes): upheld by finance, the operator owes them back",
    );
  }
}

/** One record to reverse, the reason recorded on its reversal, and the reversal's idempotency key. */
export interface UsageReversal {
  usage: UsageRecord;
  reason: string;
  idempotencyKey: string;
}

export interface ReverseOptions {
  /**
   * Earnings the operator was already paid may be taken back (docs/ledger.md, "Clawbacks"): what its
   * payable cannot cover is booked to its receivable in the same transaction, under this key. Only
   * for reversals a platform key decided (an admin's, an upheld dispute's); without it such a
   * reversal is refused (exceeds_credits).
   */
  clawbackKey?: string;
  /** The open dispute that decides these records; without it a record in an open dispute is refused (usage_disputed). */
  disputeId?: string;
  receipt?: WriteReceipt<void>;
  /** Runs in the reversals' transaction once they are written (an upheld dispute's decision). */
  afterWrite?: AfterWrite;
}

export type Reversed = { record: UsageRecord; reversalId: string; replayed: boolean };

/**
 * Corrects a usage record by reversing its ledger transfer, once, with the reason recorded on the
 * reversal. The record itself stays as it was (history is not rewritten); its status reads
 * `reversed`. Like any transfer, the reversal obeys the limits: if the operator has already been paid
 * out the net, it is refused (exceeds_credits), unless a clawback key books what the operator's
 * payable cannot cover to its receivable (ReverseOptions).
 */
export async function reverseUsage(
  db: Database,
  { usage, reason, idempotencyKey, receipt, clawbackKey }: UsageReversal & { receipt?: WriteReceipt<void>; clawbackKey?: string },
): Promise<Reversed> {
  const [r] = await reverseUsages(db, [{ usage, reason, idempotencyKey }], { receipt, clawbackKey });
  return r!;
}

/**
 * Reverses usage records in one database transaction: all of them or, when one is refused, none.
 * Without a clawback key each reversal is judged alone against its operator's payable (callers then
 * pass one record); with one, the clawback of each payable covers all of its records.
 */
export async function reverseUsages(db: Database, reversals: UsageReversal[], options: ReverseOptions = {}): Promise<Reversed[]> {
  /** When the reversals were judged: the records still in the rate-lock queue, and their own open share of their locks. */
  let judged = { queued: new Map<string, bigint>(), ownOpen: new Map<string, bigint>() };
  const results = await writeTransfers(
    db,
    async (tx) => {
      const usages = await lockedForReversal(
        tx,
        reversals.map((r) => r.usage),
        options.disputeId,
      );
      const ids = usages.map((u) => u.id);
      judged = { queued: await queuedAmong(tx, ids), ownOpen: await ownOpenShares(tx, ids) };
      const requests = options.clawbackKey === undefined ? [] : await clawbackRequests(tx, usages, options.clawbackKey);
      if (options.clawbackKey === undefined) for (const u of usages) await keepsPaidOutFunded(tx, u);
      for (const r of reversals) requests.push(await reversalOf(tx, r));
      return requests;
    },
    {
      receipt: options.receipt,
      afterWrite: async (tx, outcomes, bookedAt) => {
        await allOrNothing(reversals, options.afterWrite)(tx, outcomes, bookedAt);
        // Earnings left the payable. What of a record's net was not its own open locks' share may
        // have been paid already (never-locked earnings are paid first), and its reversal then takes
        // other earnings' money: queued records up to that much are not locked afterwards. Then the
        // operator's rate locks are kept within what is left.
        const written = outcomes.slice(outcomes.length - reversals.length);
        for (const [k, { usage: u }] of reversals.entries()) {
          if (written[k]?.kind !== "created") continue;
          // Its own: what is still queued of it (a payout may have taken part), or its locks' open share.
          const queued = judged.queued.get(u.id);
          const rest = u.net - (queued ?? judged.ownOpen.get(u.id) ?? 0n);
          if (rest > 0n) await dropQueuedPaid(tx, u.operatorId, u.assetId, rest);
        }
        const payables = new Map(reversals.map(({ usage: u }) => [`${u.operatorId}|${u.assetId}`, u]));
        for (const u of payables.values()) await sweepRateLocks(tx, u.operatorId, u.assetId);
      },
    },
  );
  const out: Reversed[] = [];
  for (const [k, r] of results.slice(results.length - reversals.length).entries()) {
    const { usage } = reversals[k]!;
    if (!r.ok) throw refusal(usage, r.error);
    await refundClosedHold(db, usage);
    out.push({ record: (await getUsage(db, usage.id))!, reversalId: r.transfer.id, replayed: r.replayed });
  }
  return out;
}

/** The reversal of one record's transfer. */
async function reversalOf(tx: Queryable, { usage, reason, idempotencyKey }: UsageReversal): Promise<TransferInput> {
  // A correction of a closed period is booked in the first open one; of a period being closed, refused.
  const booking = await bookingOf(tx, usage.marketplaceId, usage.effectiveAt, "a reversal of usage");
  const lateFor = booking.late ? { late_for: { period: booking.late.period, effective_at: booking.late.effectiveAt.toISOString() } } : {};
  return {
    kind: "reversal",
    reversesId: usage.transferId,
    idempotencyKey,
    ...(booking.late ? { effectiveAt: booking.effectiveAt } : {}),
    metadata: { usage_reversal: { usage_id: usage.id, external_id: usage.externalId, reason, ...lateFor } },
  };
}

/**
 * Under the funding locks of every operator and asset concerned (payouts, reversals and disputes of
 * them wait): the records as they are now, none of them in an open dispute other than `disputeId`.
 */
async function lockedForReversal(tx: Queryable, usages: UsageRecord[], disputeId: string | undefined): Promise<UsageRecord[]> {
  await lockOperatorsFunds(
    tx,
    usages.map((u) => ({ operatorId: u.operatorId, assetId: u.assetId })),
  );
  for (const d of await openDisputesOf(
    tx,
    usages.map((u) => u.id),
  )) {
    if (d.dispute_id !== disputeId) {
      const message = `usage record ${d.usage_id} is in open dispute ${d.dispute_id}: it is decided there (POST /v1/disputes/${d.dispute_id}/uphold reverses it)`;
      throw new LedgerError("usage_disputed", message);
    }
  }
  const fresh: UsageRecord[] = [];
  for (const u of usages) fresh.push((await getUsage(tx, u.id)) ?? u);
  return fresh;
}

/** All or nothing: a refused request (a reversal, or a clawback before them) rolls the whole batch back. */
function allOrNothing(reversals: UsageReversal[], after: AfterWrite | undefined): AfterWrite {
  return async (tx, outcomes, bookedAt) => {
    const offset = outcomes.length - reversals.length;
    for (const [k, o] of outcomes.entries()) if (o.kind === "refused") throw refusal(reversals[k - offset]?.usage, o.error);
    await after?.(tx, outcomes, bookedAt);
  };
}

function refusal(usage: UsageRecord | undefined, e: LedgerError): LedgerError {
  if (usage && (e.code === "idempotency_conflict" || e.code === "already_reversed")) {
    return new LedgerError("already_reversed", `usage record ${usage.id} was already reversed`);
  }
  return e;
}

/**
 * A record charged to a hold is refunded into the hold's escrow; if the hold is no longer open,
 * send that refund on to the customer, as closing the hold would have.
 */
async function refundClosedHold(db: Database, usage: UsageRecord): Promise<void> {
  if (usage.holdId === null) return;
  const hold = await getHold(db, usage.holdId);
  if (hold && hold.status !== "open") await closeHold(db, { id: hold.id, reason: hold.status });
}
