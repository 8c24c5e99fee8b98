import { LedgerError } from "../domain/errors.js";
import { uuidv7 } from "../domain/ids.js";
import { LedgerState, statusOf, type Transfer } from "../domain/posting.js";
import { requestHash, validateTransferInput, type TransferInput } from "../domain/transfers.js";
import { maybeGiveWay } from "../give-way.js";
import type { Database, Queryable } from "./client.js";
import { inOrder } from "./in-order.js";
import { loadTransfers } from "./queries/transfers.js";
import { writeReceipts, type WriteReceipt } from "./queries/write-receipts.js";
import { resolutionsOf, transfersByIdempotencyKey } from "./transfer-writer/statements.js";
import { lockFirst, NeedsLocks, optimistic, type AfterWrite, type BatchOutcome, type Decisions, type LockingStrategy } from "./transfer-writer/strategies.js";

export { Contended } from "./transfer-writer/statements.js";
export type { AfterWrite, BatchOutcome } from "./transfer-writer/strategies.js";
import { Contended } from "./transfer-writer/statements.js";

/** The outcome of one request of a batch: its transfer (new or replayed), or why it was refused. */
export type TransferResult = { ok: true; transfer: Transfer; replayed: boolean } | { ok: false; error: LedgerError };

const MAX_ATTEMPTS = 5;

export interface WriteOptions {
  /**
   * Runs in the batch's transaction once the requests are decided and the transfers inserted, to
   * record what depends on them (e.g. usage records) atomically with them: in the locking mode after
   * the entries and balances are written too, in the optimistic mode before (so it must not read
   * them). `bookedAt` is the instant the transfers are booked at (the clock read under the locks).
   * Throwing rolls the whole batch back; throwing Contended runs the batch again.
   */
  afterWrite?: AfterWrite;
  /**
   * Decide first, lock last (see `writeTransfers`): for the hot write paths (usage ingest, posted
   * transfers). Batches that resolve holds or reverse transfers always lock first.
   */
  optimistic?: boolean;
  /**
   * The batch is one request's change: its receipt (the audit row) is written in the batch's
   * transaction when it creates a transfer.
   */
  receipt?: WriteReceipt<void>;
}

/**
 * Requests, or a function that prepares them inside the batch's transaction (e.g. opening the
 * accounts they use on first use, so that a batch rolled back leaves no account behind either).
 */
export type BatchInputs = TransferInput[] | ((tx: Queryable) => Promise<TransferInput[]>);

/**
 * Writes a batch of transfer requests in one database transaction, set-based:
 *
 *  1. read the idempotency keys the batch uses and the transfers it refers to;
 *  2. lock the balance rows of every account involved, in one fixed order (so that concurrent
 *     batches never deadlock on them), and read which referenced holds and transfers are already
 *     resolved;
 *  3. run each request through the ledger rules in order (`LedgerState.execute`), so a later
 *     request sees the effect of an earlier one; a refused request affects nothing;
 *  4. insert all transfers with one statement, all entries with one, and update each touched
 *     balance row once.
 *
 * With `optimistic`, step 2 reads the balances without locking them and the locks are taken last,
 * just before the entries are written and the balances updated: a hot account (every usage record
 * credits the same marketplace fee account) is then locked only for the end of the transaction
 * instead of all of it. What was decided is checked under the locks: where a balance moved since
 * it was read, every accepted request is re-checked against the balance it now meets, in order,
 * and the entries' running balances are recomputed; if a limit would break, or if a request was
 * refused for a reason that depends on balances (insufficient funds, overflow), the batch runs
 * again in the locking mode. The result is the same as if the locks had been taken first. The two
 * modes are the two strategies of `transfer-writer/strategies.ts`.
 *
 * The optimistic mode inserts its transfers (holding their idempotency keys) before it locks
 * balances, the locking mode after: a retry racing its original in the other mode, or two
 * optimistic batches carrying the same keys in different orders, can deadlock on a key. PostgreSQL
 * detects it (after `deadlock_timeout`, 1 s by default) and the batch runs again (40P01 is retried),
 * then replays. Only duplicate submissions racing each other meet this.
 *
 * Each request gets its own result. Refusals (insufficient funds, unknown account, ...) are not
 * stored: a retry with the same key is evaluated afresh. If a concurrent transaction commits the
 * same idempotency key first, the unique index stops this insert and the batch is re-run, which
 * then replays the stored transfer.
 */
export async function writeTransfers(db: Database, inputs: BatchInputs, options: WriteOptions = {}): Promise<TransferResult[]> {
  let mode = options.optimistic ?? false;
  for (let attempt = 1; ; attempt++) {
    try {
      return await attemptBatch(db, inputs, withReceipt(options.afterWrite, options.receipt), mode);
    } catch (err) {
      if (err instanceof NeedsLocks) {
        mode = false;
        attempt--;
        continue;
      }
      const retryable = err instanceof Contended || isSerializationFailure(err);
      if (!retryable || attempt >= MAX_ATTEMPTS) throw err;
    }
  }
}

function withReceipt(afterWrite: AfterWrite | undefined, receipt: WriteReceipt<void> | undefined): AfterWrite | undefined {
  if (!receipt) return afterWrite;
  return async (tx, outcomes, bookedAt) => {
    await afterWrite?.(tx, outcomes, bookedAt);
    if (outcomes.some((o) => o.kind === "created")) await writeReceipts(tx, [{ receipt, result: undefined }], bookedAt);
  };
}

/** A transfer the batch created, as its result gives it. */
export function createdTransfer(o: Extract<BatchOutcome, { kind: "created" }>, bookedAt: Date): Transfer {
  return { ...o.transfer, createdAt: bookedAt, status: statusOf(o.transfer.kind, null, false) };
}

async function attemptBatch(db: Database, batch: BatchInputs, afterWrite: AfterWrite | undefined, optimisticMode: boolean): Promise<TransferResult[]> {
  let decided: Decisions | undefined;
  await db.transaction(async (tx) => {
    const inputs = typeof batch === "function" ? await batch(tx) : batch;
    const checked = await validateAndHash(inputs);
    const valid = inputs.filter((input) => checked.has(input));
    // Resolving a hold or reversing a transfer depends on what concurrent writers resolved, which
    // is read under the locks.
    const strategy = optimisticMode && !valid.some((i) => "pendingId" in i || "reversesId" in i) ? optimistic() : lockFirst();
    const state = await readState(tx, db, valid, strategy);
    decided = await decide(inputs, state, checked, strategy);
    await strategy.write(tx, state, decided, afterWrite);
  });
  const { outcomes, bookedAt } = decided!;
  const replayed = await loadTransfers(
    db,
    outcomes.flatMap((o) => (o.kind === "replayed" ? [o.id] : [])),
  );
  return outcomes.map((o): TransferResult => {
    if (o.kind === "refused") return { ok: false, error: o.error };
    if (o.kind === "replayed") return { ok: true, transfer: replayed.get(o.id)!, replayed: true };
    return { ok: true, transfer: createdTransfer(o, bookedAt), replayed: false };
  });
}

/** Validated and hashed before the account locks are taken, not while they are held; invalid requests are left out. */
async function validateAndHash(inputs: TransferInput[]): Promise<Map<TransferInput, { hash: string }>> {
  const checked = new Map<TransferInput, { hash: string }>();
  // A large batch gives way to other requests every few hundred requests here and below.
  for (const [k, input] of inputs.entries()) {
    await maybeGiveWay(k);
    if (isValid(input)) checked.set(input, { hash: requestHash(input) });
  }
  return checked;
}

/** What the ledger rules need to decide the batch: accounts, referenced transfers, idempotency keys, resolutions. */
async function readState(tx: Queryable, db: Database, valid: TransferInput[], strategy: LockingStrategy): Promise<LedgerState> {
  const state = new LedgerState(db.clock.now());
  // Transfers the batch refers to (holds to resolve, transfers to reverse, client ids to check).
  const refIds = new Set<string>();
  for (const i of valid) {
    if ("pendingId" in i) refIds.add(i.pendingId);
    if ("reversesId" in i) refIds.add(i.reversesId);
    if (i.id) refIds.add(i.id);
  }
  // Their resolution status is re-read below, under the account locks.
  const refs = [...(await loadTransfers(tx, [...refIds])).values()];
  for (const t of refs) state.transfers.set(t.id, t);

  const accountIds = new Set<string>();
  for (const i of valid) {
    if ("legs" in i) for (const leg of i.legs) accountIds.add(leg.debitAccountId).add(leg.creditAccountId);
  }
  for (const t of refs) for (const leg of t.legs) accountIds.add(leg.debitAccountId).add(leg.creditAccountId);
  const keys = [...new Set(valid.map((i) => i.idempotencyKey))];
  // Sent together, in this order (src/db/in-order.ts): each step sends its statement before its
  // first await, so the reads after the accounts' run after their locks are taken (locking mode).
  // Idempotency keys are read under the locks: a concurrent batch with the same key touched the
  // same accounts, so if it committed while this one waited, its transfer is visible here and this
  // request replays it (instead of being run again against balances it already changed).
  // Resolutions likewise: whoever resolved these held the same account locks and has committed.
  const [, existing, resolutions] = await inOrder(tx, [
    () => strategy.readAccounts(tx, [...accountIds], state),
    () => transfersByIdempotencyKey(tx, keys),
    () =>
      refs.length > 0
        ? resolutionsOf(
            tx,
            refs.map((t) => t.id),
          )
        : Promise.resolve([]),
  ]);
  // The clock is read only now, after the locks: timeouts are judged at this instant, not at BEGIN.
  state.now = db.clock.now();
  for (const e of existing) state.keys.set(e.key, { requestHash: e.hash, transferId: e.id });
  for (const r of resolutions) {
    if (r.pending_id) state.resolutions.set(r.pending_id, r.kind);
    if (r.reverses_id) state.reversed.add(r.reverses_id);
  }
  return state;
}

/** Runs each request through the ledger rules, in order; a refusal affects nothing that follows. */
async function decide(
  inputs: TransferInput[],
  state: LedgerState,
  checked: Map<TransferInput, { hash: string }>,
  strategy: LockingStrategy,
): Promise<Decisions> {
  const decided: Decisions = { created: [], entries: [], outcomes: [], bookedAt: state.now };
  for (const [k, input] of inputs.entries()) {
    // Only while no balance row is locked (the optimistic mode): a lock held longer makes others wait.
    if (!strategy.locksFirst) await maybeGiveWay(k);
    try {
      const result = state.execute(input, uuidv7(state.now.getTime()), checked.get(input));
      if (result.status === "replayed") decided.outcomes.push({ kind: "replayed", id: result.transferId });
      else {
        decided.created.push(result.transfer);
        decided.entries.push(...result.entries);
        decided.outcomes.push({ kind: "created", transfer: result.transfer });
      }
    } catch (err) {
      if (!(err instanceof LedgerError)) throw err;
      decided.outcomes.push({ kind: "refused", error: err });
    }
  }
  return decided;
}

function isValid(input: TransferInput): boolean {
  try {
    validateTransferInput(input);
    return true;
  } catch {
    return false;
  }
}

function isSerializationFailure(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  return code === "40001" || code === "40P01";
}
