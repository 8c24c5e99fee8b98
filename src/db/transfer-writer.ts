import { brokenLimit, postedBalance, type Balances, type Side } from "../domain/accounts.js";
import { LedgerError } from "../domain/errors.js";
import { uuidv7 } from "../domain/ids.js";
import { UINT256_MAX } from "../domain/money.js";
import { type EntryRecord, LedgerState, statusOf, type Transfer, type TransferRecord } from "../domain/posting.js";
import { requestHash, validateTransferInput, type TransferInput, type TransferKind } from "../domain/transfers.js";
import type { Database, Queryable } from "./client.js";
import { loadTransfers } from "./queries/transfers.js";
import { pgArray, pgColumns } from "./sql-arrays.js";
import { maybeGiveWay } from "../give-way.js";

/** The outcome of one request of a batch: its transfer (new or replayed), or why it was refused. */
export type TransferResult =
  | { ok: true; transfer: Transfer; replayed: boolean }
  | { ok: false; error: LedgerError };

const MAX_ATTEMPTS = 5;

/** A concurrent writer committed a row this batch meant to insert: run the batch again. */
export class Contended extends Error {}

/**
 * An optimistic batch met a refusal that depends on balances, or balances that moved under it so
 * that a request it accepted would now be refused: run it again with the account locks taken first.
 */
class NeedsLocks extends Error {}

/** Refusals whose outcome depends on balances read without a lock in the optimistic mode. */
const BALANCE_REFUSALS = new Set(["exceeds_credits", "exceeds_debits", "overflow"]);

/** What the batch did with each request, as seen inside its transaction. */
export type BatchOutcome =
  | { kind: "created"; transfer: TransferRecord }
  | { kind: "replayed"; id: string }
  | { kind: "refused"; error: LedgerError };

export interface WriteOptions {
  /**
   * Runs in the batch's transaction once the requests are decided and the transfers inserted, to
   * record what depends on them (e.g. usage records) atomically with them: in the locking mode after
   * the entries and balances are written too, in the optimistic mode before (so it must not read
   * them). `bookedAt` is the instant the transfers are booked at (the clock read under the locks).
   * Throwing rolls the whole batch back; throwing Contended runs the batch again.
   */
  afterWrite?: (tx: Queryable, outcomes: BatchOutcome[], bookedAt: Date) => Promise<void>;
  /**
   * Decide first, lock last (see `writeTransfers`): for the hot write paths (usage ingest, posted
   * transfers). Batches that resolve holds or reverse transfers always lock first.
   */
  optimistic?: boolean;
}

/**
 * Writes a batch of transfer requests in one database transaction, set-based:
 *
 *  1. read the idempotency keys the batch uses and the transfers it refers to;
 *  2. lock the balance rows of every account involved, in one fixed order (LOCK_ORDER, so that
 *     concurrent batches never deadlock on them), and read which referenced holds and transfers are
 *     already resolved;
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
 * again in the locking mode. The result is the same as if the locks had been taken first.
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
/**
 * Requests, or a function that prepares them inside the batch's transaction (e.g. opening the
 * accounts they use on first use, so that a batch rolled back leaves no account behind either).
 */
export type BatchInputs = TransferInput[] | ((tx: Queryable) => Promise<TransferInput[]>);

export async function writeTransfers(db: Database, inputs: BatchInputs, options: WriteOptions = {}): Promise<TransferResult[]> {
  let optimistic = options.optimistic ?? false;
  for (let attempt = 1; ; attempt++) {
    try {
      return await attemptBatch(db, inputs, options, optimistic);
    } catch (err) {
      if (err instanceof NeedsLocks) {
        optimistic = false;
        attempt--;
        continue;
      }
      const retryable = err instanceof Contended || isSerializationFailure(err);
      if (!retryable || attempt >= MAX_ATTEMPTS) throw err;
    }
  }
}

async function attemptBatch(db: Database, batch: BatchInputs, options: WriteOptions, optimistic: boolean): Promise<TransferResult[]> {
  const outcomes: BatchOutcome[] = [];
  let now = db.clock.now();

  await db.transaction(async (tx) => {
    const inputs = typeof batch === "function" ? await batch(tx) : batch;
    // Validated and hashed now, before the account locks are taken, not while they are held.
    const checked = new Map<TransferInput, { hash: string }>();
    // A large batch gives way to other requests every few hundred requests here and below.
    for (const [k, input] of inputs.entries()) {
      await maybeGiveWay(k);
      if (isValid(input)) checked.set(input, { hash: requestHash(input) });
    }
    const valid = inputs.filter((input) => checked.has(input));
    // Resolving a hold or reversing a transfer depends on what concurrent writers resolved, which
    // is read under the locks.
    if (valid.some((i) => "pendingId" in i || "reversesId" in i)) optimistic = false;
    const state = new LedgerState(now);

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
    await readAccounts(tx, [...accountIds], state, !optimistic);
    const snapshot = optimistic ? new Map([...state.accounts].map(([id, a]) => [id, a.balances])) : undefined;

    // Idempotency keys and the clock are read only now, under the locks (in the locking mode): a
    // concurrent batch with the same key touched the same accounts, so if it committed while this
    // one waited, its transfer is visible here and this request replays it (instead of being run
    // again against balances it already changed). Timeouts are judged at this instant too, not at
    // BEGIN.
    const keys = [...new Set(valid.map((i) => i.idempotencyKey))];
    const head = await tx.query<{ existing: { id: string; key: string; hash: string }[] | null }>(
      `select (select json_agg(json_build_object('id', id, 'key', idempotency_key, 'hash', request_hash))
                 from transfers where idempotency_key = any($1::text[])) as existing`,
      [pgArray(keys)],
    );
    now = db.clock.now();
    state.now = now;
    for (const e of head[0]!.existing ?? []) state.keys.set(e.key, { requestHash: e.hash, transferId: e.id });

    // Read resolutions only now: whoever resolved these held the same account locks and has committed.
    if (refs.length > 0) {
      const resolved = await tx.query<{ pending_id: string | null; reverses_id: string | null; kind: TransferKind }>(
        `select pending_id, reverses_id, kind from transfers
          where pending_id = any($1::uuid[]) or reverses_id = any($1::uuid[])`,
        [pgArray(refs.map((t) => t.id))],
      );
      for (const r of resolved) {
        if (r.pending_id) state.resolutions.set(r.pending_id, r.kind);
        if (r.reverses_id) state.reversed.add(r.reverses_id);
      }
    }

    const created: TransferRecord[] = [];
    const entries: EntryRecord[] = [];
    for (const [k, input] of inputs.entries()) {
      // Only while no balance row is locked (the optimistic mode): a lock held longer makes others wait.
      if (snapshot) await maybeGiveWay(k);
      try {
        const result = state.execute(input, uuidv7(now.getTime()), checked.get(input));
        if (result.status === "replayed") outcomes.push({ kind: "replayed", id: result.transferId });
        else {
          created.push(result.transfer);
          entries.push(...result.entries);
          outcomes.push({ kind: "created", transfer: result.transfer });
        }
      } catch (err) {
        if (!(err instanceof LedgerError)) throw err;
        outcomes.push({ kind: "refused", error: err });
      }
    }
    if (snapshot && outcomes.some((o) => o.kind === "refused" && BALANCE_REFUSALS.has(o.error.code))) throw new NeedsLocks();
    // afterWrite runs before the locks in the optimistic mode (see WriteOptions), last otherwise.
    if (created.length > 0) await insertTransfers(tx, created, now);
    if (snapshot) await options.afterWrite?.(tx, outcomes, now);
    if (created.length > 0) {
      if (snapshot) await lockRebaseAndInsert(tx, state, snapshot, entries, now);
      else await insertEntries(tx, entries, now, false);
      const touched = new Set(entries.map((e) => e.accountId));
      await updateBalances(tx, [...touched].map((id) => state.accounts.get(id)!));
    }
    if (!snapshot) await options.afterWrite?.(tx, outcomes, now);
  });

  const replayed = await loadTransfers(db, outcomes.flatMap((o) => (o.kind === "replayed" ? [o.id] : [])));
  return outcomes.map((o): TransferResult => {
    if (o.kind === "refused") return { ok: false, error: o.error };
    if (o.kind === "replayed") return { ok: true, transfer: replayed.get(o.id)!, replayed: true };
    const status = statusOf(o.transfer.kind, null, false);
    return { ok: true, transfer: { ...o.transfer, createdAt: now, status }, replayed: false };
  });
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

/**
 * The one order every writer locks balance rows in, so that concurrent writers never deadlock:
 * accounts with a balance limit first, then accounts without one (fee and revenue accounts, the
 * hot ones), each by id. The flags never change, so the order is total and fixed. The optimistic
 * mode relies on it to take the locks of the unlimited accounts last and hold them shortest.
 */
const LOCK_ORDER = "(a.debits_must_not_exceed_credits or a.credits_must_not_exceed_debits) desc, b.account_id";

/** Reads the accounts and their balances into the state; with `lock`, locks the balance rows (in LOCK_ORDER). */
async function readAccounts(tx: Queryable, ids: string[], state: LedgerState, lock: boolean): Promise<void> {
  if (ids.length === 0) return;
  const rows = await tx.query<{
    id: string; asset_id: string; normal_side: Side; dmnec: boolean; cmned: boolean;
    dp: string; cp: string; dpe: string; cpe: string; od: string;
  }>(
    `select a.id, a.asset_id, a.normal_side, b.overdraft_limit::text as od,
            a.debits_must_not_exceed_credits as dmnec, a.credits_must_not_exceed_debits as cmned,
            b.debits_posted::text as dp, b.credits_posted::text as cp,
            b.debits_pending::text as dpe, b.credits_pending::text as cpe
       from account_balances b join accounts a on a.id = b.account_id
      where b.account_id = any($1::uuid[])
      ${lock ? `order by ${LOCK_ORDER} for update of b` : ""}`,
    [pgArray(ids)],
  );
  for (const r of rows) {
    state.accounts.set(r.id, {
      id: r.id, assetId: r.asset_id, normalSide: r.normal_side,
      debitsMustNotExceedCredits: r.dmnec, creditsMustNotExceedDebits: r.cmned, overdraftLimit: BigInt(r.od),
      balances: { debitsPosted: BigInt(r.dp), creditsPosted: BigInt(r.cp), debitsPending: BigInt(r.dpe), creditsPending: BigInt(r.cpe) },
    });
  }
}

/**
 * The optimistic mode's last step: locks the balance rows the entries touch and moves what the
 * batch decided onto the balances found there, then inserts the entries. It goes in two rounds in
 * LOCK_ORDER: the accounts with a limit (customers' and operators' balances: many, each touched by
 * few concurrent batches), then the accounts without one (fee accounts: few, touched by every
 * batch), so that a hot account's lock is held only for the insert of its own entries, the
 * balance update and the commit. Entries of an account are inserted while its row is locked: their
 * ids follow the order of its running balance.
 *
 * An account whose balance did not move since it was read keeps the running balances computed;
 * one that moved gets its entries replayed in order from the balance it now has, with its limits
 * and the uint256 bound checked after each transfer as `LedgerState` does. A check that fails
 * throws NeedsLocks (the batch is rolled back and runs again, locking first).
 */
async function lockRebaseAndInsert(tx: Queryable, state: LedgerState, snapshot: Map<string, Balances>, entries: EntryRecord[], bookedAt: Date): Promise<void> {
  const limited = (id: string) => {
    const a = state.accounts.get(id)!;
    return a.debitsMustNotExceedCredits || a.creditsMustNotExceedDebits;
  };
  for (const round of [true, false]) {
    const mine = entries.filter((e) => limited(e.accountId) === round);
    if (mine.length === 0) continue;
    await lockAndRebase(tx, state, snapshot, mine);
    // The hot accounts' round holds locks every batch waits for: it does not give way.
    await insertEntries(tx, mine, bookedAt, round);
  }
}

async function lockAndRebase(tx: Queryable, state: LedgerState, snapshot: Map<string, Balances>, entries: EntryRecord[]): Promise<void> {
  const byAccount = new Map<string, EntryRecord[]>();
  for (const e of entries) {
    const list = byAccount.get(e.accountId);
    if (list) list.push(e);
    else byAccount.set(e.accountId, [e]);
  }
  const rows = await tx.query<{ id: string; dp: string; cp: string; dpe: string; cpe: string; od: string }>(
    `select account_id as id, debits_posted::text as dp, credits_posted::text as cp,
            debits_pending::text as dpe, credits_pending::text as cpe, overdraft_limit::text as od
       from account_balances where account_id = any($1::uuid[])
      order by account_id for update`,
    [pgArray([...byAccount.keys()])],
  );
  for (const r of rows) {
    const before = snapshot.get(r.id)!;
    const now: Balances = { debitsPosted: BigInt(r.dp), creditsPosted: BigInt(r.cp), debitsPending: BigInt(r.dpe), creditsPending: BigInt(r.cpe) };
    const account = state.accounts.get(r.id)!;
    // A credit limit changed since the read (under this row lock) is checked again as a move is.
    const overdraftLimit = BigInt(r.od);
    if (sameBalances(now, before) && overdraftLimit === (account.overdraftLimit ?? 0n)) continue;
    account.overdraftLimit = overdraftLimit;
    const list = byAccount.get(r.id)!;
    const b = { ...now };
    list.forEach((e, k) => {
      if (e.side === "debit") {
        b.debitsPosted += e.postedAmount;
        b.debitsPending += e.pendingAmount;
      } else {
        b.creditsPosted += e.postedAmount;
        b.creditsPending += e.pendingAmount;
      }
      e.balanceAfter = postedBalance(account.normalSide, b);
      if (list[k + 1]?.transferId === e.transferId) return;
      // The end of this transfer's entries on the account: its checks, as LedgerState.apply does them.
      if (b.debitsPosted > UINT256_MAX || b.creditsPosted > UINT256_MAX || b.debitsPending > UINT256_MAX || b.creditsPending > UINT256_MAX ||
          b.debitsPending < 0n || b.creditsPending < 0n || brokenLimit(account, b) !== undefined) {
        throw new NeedsLocks();
      }
    });
    account.balances = b;
  }
  if (rows.length !== byAccount.size) throw new Error("ledger bug: a balance row of an account in use is missing");
}

function sameBalances(a: Balances, b: Balances): boolean {
  return a.debitsPosted === b.debitsPosted && a.creditsPosted === b.creditsPosted &&
    a.debitsPending === b.debitsPending && a.creditsPending === b.creditsPending;
}

async function insertTransfers(tx: Queryable, created: TransferRecord[], createdAt: Date): Promise<void> {
  const inserted = await tx.query(
    `insert into transfers (id, idempotency_key, request_hash, kind, pending_id, reverses_id, timeout_at, effective_at, metadata, created_at)
     select u.*, $10::timestamptz from unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::uuid[], $6::uuid[],
                          $7::timestamptz[], $8::timestamptz[], $9::jsonb[]) u
     on conflict do nothing
     returning id`,
    [
      ...(await pgColumns(created, [
        (t) => t.id, (t) => t.idempotencyKey, (t) => t.requestHash, (t) => t.kind, (t) => t.pendingId, (t) => t.reversesId,
        (t) => t.timeoutAt?.toISOString() ?? null, (t) => t.effectiveAt.toISOString(), (t) => JSON.stringify(t.metadata),
      ])),
      createdAt.toISOString(),
    ],
  );
  if (inserted.length !== created.length) throw new Contended();
}

/** Entries are booked at their transfer's instant (`createdAt`, one parameter for the whole batch). */
async function insertEntries(tx: Queryable, entries: EntryRecord[], createdAt: Date, giveWay: boolean): Promise<void> {
  await tx.query(
    `insert into entries (transfer_id, leg, account_id, asset_id, side, posted_amount, pending_amount, balance_after, effective_at, created_at)
     select u.*, $10::timestamptz from unnest($1::uuid[], $2::int[], $3::uuid[], $4::uuid[], $5::text[], $6::numeric[], $7::numeric[],
                          $8::numeric[], $9::timestamptz[]) u`,
    [
      ...(await pgColumns(entries, [
        (e) => e.transferId, (e) => e.leg, (e) => e.accountId, (e) => e.assetId, (e) => e.side, (e) => e.postedAmount,
        (e) => e.pendingAmount, (e) => e.balanceAfter, (e) => e.effectiveAt.toISOString(),
      ], { giveWay })),
      createdAt.toISOString(),
    ],
  );
}

async function updateBalances(tx: Queryable, accounts: { id: string; balances: { debitsPosted: bigint; creditsPosted: bigint; debitsPending: bigint; creditsPending: bigint } }[]): Promise<void> {
  await tx.query(
    `update account_balances b
        set debits_posted = d.dp, credits_posted = d.cp, debits_pending = d.dpe, credits_pending = d.cpe
       from unnest($1::uuid[], $2::numeric[], $3::numeric[], $4::numeric[], $5::numeric[]) as d(id, dp, cp, dpe, cpe)
      where b.account_id = d.id`,
    [
      pgArray(accounts.map((a) => a.id)),
      pgArray(accounts.map((a) => a.balances.debitsPosted)),
      pgArray(accounts.map((a) => a.balances.creditsPosted)),
      pgArray(accounts.map((a) => a.balances.debitsPending)),
      pgArray(accounts.map((a) => a.balances.creditsPending)),
    ],
  );
}
