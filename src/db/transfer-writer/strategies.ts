import { brokenLimit, postedBalance, type Balances } from "../../domain/accounts.js";
import type { LedgerError } from "../../domain/errors.js";
import { UINT256_MAX } from "../../domain/money.js";
import type { AccountState, EntryRecord, LedgerState, TransferRecord } from "../../domain/posting.js";
import type { Queryable } from "../client.js";
import { inOrder } from "../in-order.js";
import {
  balanceRows,
  entryRows,
  insertEntries,
  insertTransfers,
  lockBalanceRows,
  readAccounts,
  sendBalances,
  sendEntries,
  sendTransfers,
  transferRows,
  updateBalances,
} from "./statements.js";

/** What the batch did with each request, as seen inside its transaction. */
export type BatchOutcome = { kind: "created"; transfer: TransferRecord } | { kind: "replayed"; id: string } | { kind: "refused"; error: LedgerError };

/** See WriteOptions.afterWrite. */
export type AfterWrite = (tx: Queryable, outcomes: BatchOutcome[], bookedAt: Date) => Promise<void>;

/** What the ledger rules decided for a batch, ready to be written. */
export interface Decisions {
  created: TransferRecord[];
  entries: EntryRecord[];
  outcomes: BatchOutcome[];
  bookedAt: Date;
}

/**
 * How a batch takes its balance locks: the two modes of `writeTransfers` (see there). Both read the
 * accounts, let the ledger rules decide, and write the same rows; they differ in when the balance
 * rows are locked and so in when `afterWrite` may run.
 */
export interface LockingStrategy {
  /** True when the balances are read under their locks, so that what is decided stands as decided. */
  readonly locksFirst: boolean;
  /** Reads the accounts the batch touches, with their balances, into the state. */
  readAccounts(tx: Queryable, ids: string[], state: LedgerState): Promise<void>;
  /** Writes the transfers, entries and balances, and runs afterWrite where this mode allows it. */
  write(tx: Queryable, state: LedgerState, decided: Decisions, afterWrite?: AfterWrite): Promise<void>;
}

/**
 * An optimistic batch met a refusal that depends on balances, or balances that moved under it so
 * that a request it accepted would now be refused: run it again with the account locks taken first.
 */
export class NeedsLocks extends Error {}

/** Refusals whose outcome depends on balances read without a lock in the optimistic mode. */
const BALANCE_REFUSALS = new Set(["exceeds_credits", "exceeds_debits", "overflow"]);

/** Lock first: the balance rows are locked as they are read; afterWrite runs last. */
export function lockFirst(): LockingStrategy {
  return {
    locksFirst: true,
    readAccounts: (tx, ids, state) => readAccounts(tx, ids, state, true),
    async write(tx, state, { created, entries, outcomes, bookedAt }, afterWrite) {
      if (created.length > 0) {
        await insertTransfers(tx, created, bookedAt);
        await insertEntries(tx, entries, bookedAt, false);
        await updateBalances(tx, touchedAccounts(state, entries));
      }
      await afterWrite?.(tx, outcomes, bookedAt);
    },
  };
}

/**
 * Decide first, lock last: balances are read without locks and a snapshot kept; afterWrite runs
 * right after the transfers are inserted, before any balance row is locked (so it must not read
 * entries or balances); then the balance rows are locked and what moved since the snapshot is
 * re-checked (`lockRebaseAndInsert`).
 */
export function optimistic(): LockingStrategy {
  let snapshot = new Map<string, Balances>();
  return {
    locksFirst: false,
    async readAccounts(tx, ids, state) {
      await readAccounts(tx, ids, state, false);
      snapshot = new Map([...state.accounts].map(([id, a]) => [id, a.balances]));
    },
    async write(tx, state, { created, entries, outcomes, bookedAt }, afterWrite) {
      if (outcomes.some((o) => o.kind === "refused" && BALANCE_REFUSALS.has(o.error.code))) throw new NeedsLocks();
      // The transfers' insert and afterWrite's statements are sent together, the insert first
      // (its parameters are built before, so it is sent before afterWrite runs): afterWrite's
      // statements run after it, as if it had been awaited (src/db/in-order.ts).
      const rows = created.length > 0 ? await transferRows(created, bookedAt) : undefined;
      await inOrder(tx, [() => (rows ? sendTransfers(tx, rows) : Promise.resolve()), () => afterWrite?.(tx, outcomes, bookedAt) ?? Promise.resolve()]);
      if (created.length > 0) await lockRebaseAndInsert(tx, state, snapshot, entries, bookedAt);
    },
  };
}

function touchedAccounts(state: LedgerState, entries: EntryRecord[]) {
  return [...new Set(entries.map((e) => e.accountId))].map((id) => state.accounts.get(id)!);
}

/**
 * The optimistic mode's last step: locks the balance rows the entries touch and moves what the
 * batch decided onto the balances found there, inserts the entries, and updates the balances. It
 * goes in two rounds in lock order: the accounts with a limit (customers' and operators' balances:
 * many, each touched by few concurrent batches), then the accounts without one (fee accounts: few,
 * touched by every batch), so that a hot account's lock is held only for the insert of its own
 * entries, the balance update and the commit. Entries of an account are inserted while its row is
 * locked: their ids follow the order of its running balance.
 *
 * Statements that need nothing from each other are sent together (src/db/in-order.ts): the first
 * round's entries with the second round's locks (the locks are taken after the entries are
 * inserted, as before, one round trip less), and the last round's entries with the balance update
 * (one round trip less while the hot rows are locked).
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
  // The entries of the round before, built and not yet sent.
  let unsent: string[] | undefined;
  const sendUnsent = () => {
    const params = unsent;
    unsent = undefined;
    return params ? sendEntries(tx, params) : Promise.resolve();
  };
  for (const round of [true, false]) {
    const mine = entries.filter((e) => limited(e.accountId) === round);
    if (mine.length === 0) continue;
    const byAccount = new Map<string, EntryRecord[]>();
    for (const e of mine) {
      const list = byAccount.get(e.accountId);
      if (list) list.push(e);
      else byAccount.set(e.accountId, [e]);
    }
    const [, rows] = await inOrder(tx, [sendUnsent, () => lockBalanceRows(tx, [...byAccount.keys()])]);
    rebaseLocked(state, snapshot, byAccount, rows);
    // The hot accounts' round holds locks every batch waits for: it does not give way.
    unsent = await entryRows(mine, bookedAt, round);
  }
  const balances = await balanceRows(touchedAccounts(state, entries));
  await inOrder(tx, [sendUnsent, () => sendBalances(tx, balances)]);
}

function rebaseLocked(
  state: LedgerState,
  snapshot: Map<string, Balances>,
  byAccount: Map<string, EntryRecord[]>,
  rows: { id: string; dp: string; cp: string; dpe: string; cpe: string; od: string }[],
): void {
  for (const r of rows) {
    const now: Balances = { debitsPosted: BigInt(r.dp), creditsPosted: BigInt(r.cp), debitsPending: BigInt(r.dpe), creditsPending: BigInt(r.cpe) };
    const account = state.accounts.get(r.id)!;
    // A credit limit changed since the read (under this row lock) is checked again as a move is.
    const overdraftLimit = BigInt(r.od);
    if (sameBalances(now, snapshot.get(r.id)!) && overdraftLimit === (account.overdraftLimit ?? 0n)) continue;
    account.overdraftLimit = overdraftLimit;
    account.balances = rebase(account, now, byAccount.get(r.id)!);
  }
  if (rows.length !== byAccount.size) throw new Error("ledger bug: a balance row of an account in use is missing");
}

/** Replays an account's entries from the balances it has now, checking each transfer as LedgerState.apply does. */
function rebase(account: AccountState, now: Balances, list: EntryRecord[]): Balances {
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
    // The end of this transfer's entries on the account: its checks.
    if (
      b.debitsPosted > UINT256_MAX ||
      b.creditsPosted > UINT256_MAX ||
      b.debitsPending > UINT256_MAX ||
      b.creditsPending > UINT256_MAX ||
      b.debitsPending < 0n ||
      b.creditsPending < 0n ||
      brokenLimit(account, b) !== undefined
    ) {
      throw new NeedsLocks();
    }
  });
  return b;
}

function sameBalances(a: Balances, b: Balances): boolean {
  return (
    a.debitsPosted === b.debitsPosted && a.creditsPosted === b.creditsPosted && a.debitsPending === b.debitsPending && a.creditsPending === b.creditsPending
  );
}
