import type { Database, Queryable } from "../db/client.js";
import { ensureAccounts } from "../db/ensure-accounts.js";
import { getServiceAccountAvailable } from "../db/queries/accounts.js";
import { operatorsOwing, receivableOf, receivablesOwed, type ReceivableReportRow } from "../db/queries/receivables.js";
import { writeTransfers } from "../db/transfer-writer.js";
import { chart, specKey } from "../domain/chart.js";
import type { TransferInput } from "../domain/transfers.js";
import type { UsageRecord } from "../domain/usage.js";
import { awaitingFunds, lockOperatorFunds, withheldEarnings } from "./funding.js";
import { dropQueuedPaid, sweepRateLocks } from "./rate-lock-sweep.js";

/**
 * Clawbacks and operator receivables (docs/ledger.md, "Clawbacks"). An operator's payable may never
 * be overdrawn. When a reversal that a platform key decided (an admin's, an upheld dispute's) takes
 * back earnings the operator was already paid, the part its payable cannot cover is booked to the
 * operator's receivable (receivable → payable), in the reversal's own transaction, so the payable
 * ends at exactly what still waits for funds and the receivable says what the operator owes. Its
 * next funded earnings pay it back (payable → receivable) before anything else is payable.
 */

/** Records grouped by the payable (operator and asset) they take earnings back from, in a fixed order. */
function byPayable(usages: UsageRecord[]): UsageRecord[][] {
  const groups = new Map<string, UsageRecord[]>();
  for (const u of usages) {
    const k = `${u.operatorId}|${u.assetId}`;
    groups.set(k, [...(groups.get(k) ?? []), u]);
  }
  return [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, g]) => g);
}

/**
 * Inside the reversals' transaction, with the operators' funding locks held: per payable the
 * records take from, the clawback that keeps it whole once they are reversed. The payable must still
 * hold the earnings that wait for funds once those records are gone (what was paid out came from
 * funded earnings: funding.ts), so the shortfall is what waits less what is left:
 * max(0, awaiting′ − (available − Σ net)). Records already reversed take nothing (a retry replays).
 */
export async function clawbackRequests(tx: Queryable, usages: UsageRecord[], key: string): Promise<TransferInput[]> {
  const out: TransferInput[] = [];
  for (const group of byPayable(usages.filter((u) => u.status !== "reversed"))) {
    const { operatorId, assetId } = group[0]!;
    const payable = chart.operatorPayable(assetId, operatorId);
    const available = (await getServiceAccountAvailable(tx, assetId, payable.ref)) ?? 0n;
    const net = group.reduce((s, u) => s + u.net, 0n);
    const awaiting = await awaitingFunds(tx, operatorId, assetId, { withoutUsageIds: group.map((u) => u.id) });
    const shortfall = awaiting.total - (available - net);
    if (shortfall <= 0n) continue;
    const receivable = chart.operatorReceivable(assetId, operatorId);
    const ids = await ensureAccounts(tx, [receivable, payable]);
    out.push({
      kind: "standard",
      idempotencyKey: `${key}:clawback:${operatorId}:${assetId}`,
      metadata: { clawback: { operator_id: operatorId, usage_ids: group.map((u) => u.id) } },
      legs: [{ debitAccountId: ids.get(specKey(receivable))!, creditAccountId: ids.get(specKey(payable))!, amount: shortfall }],
    });
  }
  return out;
}

/**
 * Pays back an operator's receivable in an asset from its payable, as far as its funded earnings
 * allow (not what waits for funds, not what open disputes hold): one transfer payable → receivable,
 * judged under the operator's funding lock. Its idempotency key names the receivable's state it was
 * judged on, so two runs that saw the same state write it once. Answers the amount recovered.
 */
export async function recoverReceivable(db: Database, operatorId: string, assetId: string): Promise<bigint> {
  let amount = 0n;
  const [r] = await writeTransfers(
    db,
    async (tx): Promise<TransferInput[]> => {
      await lockOperatorFunds(tx, operatorId, assetId);
      amount = 0n;
      const owed = await receivableOf(tx, operatorId, assetId);
      if (!owed || BigInt(owed.owed) <= 0n) return [];
      const payable = chart.operatorPayable(assetId, operatorId);
      const available = (await getServiceAccountAvailable(tx, assetId, payable.ref)) ?? 0n;
      const w = await withheldEarnings(tx, operatorId, assetId);
      const free = available - w.awaiting.total - w.held;
      amount = free < BigInt(owed.owed) ? free : BigInt(owed.owed);
      if (amount <= 0n) return [];
      const ids = await ensureAccounts(tx, [payable]);
      return [
        {
          kind: "standard",
          idempotencyKey: `receivable-recovery:${owed.account_id}:${owed.credits_posted}`,
          metadata: { receivable_recovery: { operator_id: operatorId } },
          legs: [{ debitAccountId: ids.get(specKey(payable))!, creditAccountId: owed.account_id, amount }],
        },
      ];
    },
    {
      // Earnings left the payable for the receivable: queued records it took are not locked
      // afterwards, and the operator's rate locks are kept within what is left.
      afterWrite: async (tx, outcomes) => {
        if (outcomes.some((o) => o.kind === "created")) await dropQueuedPaid(tx, operatorId, assetId, amount);
        await sweepRateLocks(tx, operatorId, assetId);
      },
    },
  );
  if (r === undefined) return 0n;
  if (!r.ok) throw r.error;
  return r.replayed ? 0n : amount;
}

/**
 * Recovers what it can of every receivable with something owed: of these operators (after their
 * usage was posted), or of all (the payout worker's pass). Each in its own transaction.
 */
export async function recoverReceivables(db: Database, operatorIds: string[] | null = null): Promise<number> {
  if (operatorIds !== null && operatorIds.length === 0) return 0;
  let recovered = 0;
  for (const o of await operatorsOwing(db, operatorIds === null ? null : [...new Set(operatorIds)])) {
    if ((await recoverReceivable(db, o.operator_id, o.asset_id)) > 0n) recovered++;
  }
  return recovered;
}

/**
 * After usage was posted for these operators: what of their receivables the new earnings cover is
 * recovered now, each in its own transaction after the usage's. It costs one indexed read when none
 * of them owes anything. A failure here does not fail the usage (it is written): payable-now already
 * keeps the receivable back, and the payout worker's next pass recovers it.
 */
export async function recoverFromEarnings(db: Database, operatorIds: string[]): Promise<void> {
  try {
    await recoverReceivables(db, operatorIds);
  } catch {
    // Left to the payout worker's next pass (see above).
  }
}

export type { ReceivableReportRow };

/** Every operator receivable with something owed (of one asset, or all), for finance's report. */
export async function operatorReceivables(db: Queryable, assetId: string | undefined): Promise<ReceivableReportRow[]> {
  return receivablesOwed(db, assetId);
}
