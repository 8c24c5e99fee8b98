import type { Database, Queryable } from "../../db/client.js";
import { ensureAccounts } from "../../db/ensure-accounts.js";
import { Contended, writeTransfers, type BatchOutcome } from "../../db/transfer-writer.js";
import { inOrder } from "../../db/in-order.js";
import { insertUsageRecords } from "../../db/usage-writer.js";
import { insertCapacityFlags } from "../../db/queries/capacity.js";
import { writeReceipts, type WriteReceipt } from "../../db/queries/write-receipts.js";
import { specKey, type AccountSpec } from "../../domain/chart.js";
import { sha256Hex } from "../../domain/canonical.js";
import { withRequestHash, type TransferInput } from "../../domain/transfers.js";
import type { UsageRecord } from "../../domain/usage.js";
import { maybeGiveWay } from "../../give-way.js";
import { lockUsageFunding } from "../funding.js";
import { bookingsChanged } from "../periods.js";
import { capacityChanged } from "./capacity.js";
import { newestFeeScheduleVersions } from "../../db/queries/fee-schedules.js";
import { ledgerKey, type Planned } from "./types.js";

/** A marketplace's period changed status between planning and writing: nothing is written; plan again. */
export class PeriodsChanged extends Error {}
/** A marketplace published a fee schedule version between planning and writing: nothing is written; rate again. */
export class FeeSchedulesChanged extends Error {}
/** Another batch wrote usage over the capacity this batch was judged against: nothing is written; plan again. */
export class CapacityChanged extends Error {}
/** An atomic batch met a refusal: roll back what the ledger accepted of it. */
class AtomicAbort extends Error {}
/** Every request was refused or replayed: roll back, so that no account opened for them remains. */
class NothingWritten extends Error {}

/**
 * What the batch's transaction saw in its last attempt (`writeTransfers` runs it again when it is
 * contended): the accounts it opened, the ledger's outcome of each request (by place in `planned`),
 * and the usage rows it wrote.
 */
export interface Attempt {
  accounts: Map<string, string>;
  outcomes: BatchOutcome[];
  records: Map<number, UsageRecord>;
}

/** How the batch ended: written, or rolled back because nothing was written or an atomic batch met a refusal. */
export type BatchWrite =
  ({ kind: "written" } & Attempt) | { kind: "nothing_written" | "atomic_abort"; accounts: Map<string, string>; outcomes: BatchOutcome[] };

/**
 * Writes the planned records as one ledger batch (one transfer each) with their usage rows, in one
 * database transaction. With `atomic`, one refusal rolls the whole batch back.
 */
export async function writeUsageBatch(
  db: Database,
  planned: Planned[],
  atomic: boolean,
  receipt?: WriteReceipt<void>,
  afterRecords?: (tx: Queryable, attempt: Attempt) => Promise<void>,
): Promise<BatchWrite> {
  const last: Attempt = { accounts: new Map(), outcomes: [], records: new Map() };
  try {
    await writeTransfers(db, (tx) => prepareTransfers(tx, planned, last), {
      optimistic: true,
      afterWrite: async (tx, written, bookedAt) => {
        await recordUsage(tx, planned, atomic, last, written, bookedAt);
        // In the same transaction as the records: the batch's log (src/services/usage-batches.ts).
        await afterRecords?.(tx, last);
      },
      receipt,
    });
  } catch (err) {
    if (err instanceof NothingWritten) return { kind: "nothing_written", accounts: last.accounts, outcomes: last.outcomes };
    if (err instanceof AtomicAbort) return { kind: "atomic_abort", accounts: last.accounts, outcomes: last.outcomes };
    throw err;
  }
  return { kind: "written", ...last };
}

/**
 * The batch's ledger requests. Accounts are opened on first use inside the batch's transaction: a
 * batch that writes nothing (all refused, or an atomic abort) leaves no account behind.
 */
async function prepareTransfers(tx: Queryable, planned: Planned[], last: Attempt): Promise<TransferInput[]> {
  // Sent together, in this order (src/db/in-order.ts): the funding locks first, in one statement
  // sent before anything is awaited, so the reads after it run under them.
  // What changed under the locks is thrown by its step, so that it wins over a failure of a later
  // step (an account opened through the API), as when they were awaited one after another.
  const [, , , , accounts] = await inOrder(tx, [
    () =>
      lockUsageFunding(
        tx,
        planned.map((p) => p.item.marketplaceId),
      ),
    // Judged again under the funding locks, which a change of period status takes exclusively: a
    // month that started closing or closed since the records were planned sends them back to be planned again.
    async () => {
      if (await bookingsChanged(tx, planned)) throw new PeriodsChanged();
    },
    async () => {
      if (await capacityChanged(tx, planned)) throw new CapacityChanged();
    },
    // Judged again under the funding locks too, which publishing a fee schedule takes exclusively:
    // a version published since the records were rated (it may cover them) sends them back.
    async () => {
      if (await feeSchedulesChanged(tx, planned)) throw new FeeSchedulesChanged();
    },
    () =>
      ensureAccounts(
        tx,
        planned.flatMap((p) => ["accountId" in p.payer ? [] : [p.payer], p.operator, ...p.fees].flat()),
      ),
  ]);
  last.accounts = accounts;
  const transfers: TransferInput[] = [];
  for (const [k, p] of planned.entries()) {
    await maybeGiveWay(k);
    // Its request hash is derived from the record's content hash (not hashed again from the request).
    transfers.push(withRequestHash(toTransfer(p, last.accounts), sha256Hex(`usage-record:${p.hash}`)));
  }
  return transfers;
}

/** Inside the transaction, once the ledger has decided: rolls back (see above) or writes the usage rows of the transfers created. */
async function recordUsage(tx: Queryable, planned: Planned[], atomic: boolean, last: Attempt, written: BatchOutcome[], bookedAt: Date): Promise<void> {
  last.outcomes = written;
  if (atomic && written.some((o) => o.kind === "refused")) throw new AtomicAbort();
  if (!written.some((o) => o.kind === "created")) throw new NothingWritten();
  last.records = new Map();
  planned.forEach((p, k) => {
    const o = written[k]!;
    if (o.kind === "created") last.records.set(k, toRecord(p, last.accounts, o.transfer.id, bookedAt));
  });
  // Sent together (src/db/in-order.ts): the usage rows, their capacity flags, and the receipts of
  // single API calls whose record this batch wrote, answered at the scale the record was rated at.
  const [inserted] = await inOrder(tx, [
    () => insertUsageRecords(tx, [...last.records.values()]),
    () =>
      insertCapacityFlags(
        tx,
        planned.flatMap((p, k) => {
          const record = last.records.get(k);
          return p.capacityFlag && record
            ? [{ usageId: record.id, marketplaceId: record.marketplaceId, operatorId: record.operatorId, resource: record.resource, ...p.capacityFlag }]
            : [];
        }),
        bookedAt,
      ),
    () =>
      writeReceipts(
        tx,
        planned.flatMap((p, k) => {
          const record = last.records.get(k);
          return p.item.receipt && record ? [{ receipt: p.item.receipt, result: { record, scale: p.scale } }] : [];
        }),
        bookedAt,
      ),
  ]);
  if (inserted !== last.records.size) throw new Contended();
}

function toTransfer(p: Planned, accounts: Map<string, string>): TransferInput {
  const id = (s: AccountSpec) => accounts.get(specKey(s))!;
  const customer = "accountId" in p.payer ? p.payer.accountId : id(p.payer);
  const legs = [
    ...(p.split.net > 0n ? [{ debitAccountId: customer, creditAccountId: id(p.operator), amount: p.split.net }] : []),
    ...p.split.fees.flatMap((f, k) => (f.amount > 0n ? [{ debitAccountId: customer, creditAccountId: id(p.fees[k]!), amount: f.amount }] : [])),
  ];
  return {
    kind: "standard",
    idempotencyKey: ledgerKey(p.item.marketplaceId, p.item.input.externalId),
    effectiveAt: p.booking.effectiveAt,
    // Deterministic (no usage id): concurrent submissions of one record must make the same ledger request, so the loser replays.
    // The record's content hash makes two different records under one external_id two different
    // ledger requests (a conflict), even when they happen to rate to the same legs.
    // A late record (its period closed) names the period and instant it belongs to.
    metadata: {
      usage: {
        marketplace_id: p.item.marketplaceId,
        external_id: p.item.input.externalId,
        request_hash: p.hash,
        ...(p.booking.late ? { late_for: { period: p.booking.late.period, effective_at: p.booking.late.effectiveAt.toISOString() } } : {}),
      },
    },
    legs,
  };
}

function toRecord(p: Planned, accounts: Map<string, string>, transferId: string, createdAt: Date): UsageRecord {
  const { marketplaceId, input } = p.item;
  return {
    id: p.usageId,
    marketplaceId,
    externalId: input.externalId,
    requestHash: p.hash,
    operatorId: input.operatorId,
    customerId: input.customerId,
    resource: input.resource,
    unit: input.unit,
    quantity: input.quantity,
    unitPrice: input.unitPrice ?? null,
    assetId: p.assetId,
    gross: p.split.gross,
    net: p.split.net,
    fees: p.split.fees.map((f, k) => ({ party: f.party, accountId: accounts.get(specKey(p.fees[k]!))!, amount: f.amount })),
    feeScheduleVersion: p.feeScheduleVersion,
    periodStart: input.periodStart,
    periodEnd: input.periodEnd,
    effectiveAt: p.booking.effectiveAt,
    holdId: input.holdId ?? null,
    transferId,
    metadata: input.metadata ?? {},
    createdAt,
    status: "posted",
  };
}

/** Whether a marketplace of these records has a newer fee schedule version than when they were rated. */
async function feeSchedulesChanged(tx: Queryable, planned: Planned[]): Promise<boolean> {
  const newest = await newestFeeScheduleVersions(tx, [...new Set(planned.map((p) => p.item.marketplaceId))]);
  return planned.some((p) => (newest.get(p.item.marketplaceId) ?? 0) !== p.newestScheduleVersion);
}
