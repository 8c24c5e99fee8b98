import type { Side } from "../../domain/accounts.js";
import type { EntryRecord, LedgerState, TransferRecord } from "../../domain/posting.js";
import type { TransferKind } from "../../domain/transfers.js";
import type { Queryable } from "../client.js";
import { pgArray, pgColumns } from "../sql-arrays.js";

// The batch writer's statements: set-based, one statement per step for the whole batch. Raw SQL
// (unnest over column arrays, locks in a fixed order) because this is the ledger's hot path
// (docs/performance.md).

/** A concurrent writer committed a row this batch meant to insert: run the batch again. */
export class Contended extends Error {}

/**
 * The one order every writer locks balance rows in, so that concurrent writers never deadlock:
 * accounts with a balance limit first, then accounts without one (fee and revenue accounts, the
 * hot ones), each by id. The flags never change, so the order is total and fixed. The optimistic
 * mode relies on it to take the locks of the unlimited accounts last and hold them shortest.
 */
const LOCK_ORDER = "(a.debits_must_not_exceed_credits or a.credits_must_not_exceed_debits) desc, b.account_id";

/** Reads the accounts and their balances into the state; with `lock`, locks the balance rows (in LOCK_ORDER). */
export async function readAccounts(tx: Queryable, ids: string[], state: LedgerState, lock: boolean): Promise<void> {
  if (ids.length === 0) return;
  const rows = await tx.query<{
    id: string;
    asset_id: string;
    normal_side: Side;
    dmnec: boolean;
    cmned: boolean;
    dp: string;
    cp: string;
    dpe: string;
    cpe: string;
    od: string;
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
      id: r.id,
      assetId: r.asset_id,
      normalSide: r.normal_side,
      debitsMustNotExceedCredits: r.dmnec,
      creditsMustNotExceedDebits: r.cmned,
      overdraftLimit: BigInt(r.od),
      balances: { debitsPosted: BigInt(r.dp), creditsPosted: BigInt(r.cp), debitsPending: BigInt(r.dpe), creditsPending: BigInt(r.cpe) },
    });
  }
}

/** The balance rows of these accounts, locked in id order (the optimistic mode's late lock). */
export async function lockBalanceRows(tx: Queryable, ids: string[]): Promise<{ id: string; dp: string; cp: string; dpe: string; cpe: string; od: string }[]> {
  return tx.query(
    `select account_id as id, debits_posted::text as dp, credits_posted::text as cp,
            debits_pending::text as dpe, credits_pending::text as cpe, overdraft_limit::text as od
       from account_balances where account_id = any($1::uuid[])
      order by account_id for update`,
    [pgArray(ids)],
  );
}

/** The transfers already recorded under these idempotency keys. */
export async function transfersByIdempotencyKey(tx: Queryable, keys: string[]): Promise<{ id: string; key: string; hash: string }[]> {
  const head = await tx.query<{ existing: { id: string; key: string; hash: string }[] | null }>(
    `select (select json_agg(json_build_object('id', id, 'key', idempotency_key, 'hash', request_hash))
               from transfers where idempotency_key = any($1::text[])) as existing`,
    [pgArray(keys)],
  );
  return head[0]!.existing ?? [];
}

/** The transfers that resolve (post or void) or reverse any of these transfers. */
export async function resolutionsOf(tx: Queryable, ids: string[]): Promise<{ pending_id: string | null; reverses_id: string | null; kind: TransferKind }[]> {
  return tx.query(
    `select pending_id, reverses_id, kind from transfers
      where pending_id = any($1::uuid[]) or reverses_id = any($1::uuid[])`,
    [pgArray(ids)],
  );
}

/** Inserts the batch's transfers; a key a concurrent writer committed first throws Contended. */
export async function insertTransfers(tx: Queryable, created: TransferRecord[], createdAt: Date): Promise<void> {
  return sendTransfers(tx, await transferRows(created, createdAt));
}

/** The parameters of the transfers' insert (built before it is sent: see sendTransfers). */
export async function transferRows(created: TransferRecord[], createdAt: Date): Promise<{ count: number; params: string[] }> {
  return {
    count: created.length,
    params: [
      ...(await pgColumns(created, [
        (t) => t.id,
        (t) => t.idempotencyKey,
        (t) => t.requestHash,
        (t) => t.kind,
        (t) => t.pendingId,
        (t) => t.reversesId,
        (t) => t.timeoutAt?.toISOString() ?? null,
        (t) => t.effectiveAt.toISOString(),
        (t) => JSON.stringify(t.metadata),
      ])),
      createdAt.toISOString(),
    ],
  };
}

/**
 * Sends the transfers' insert at once (before any await: statements sent after it without waiting
 * run after it, src/db/in-order.ts); a key a concurrent writer committed first throws Contended.
 */
export async function sendTransfers(tx: Queryable, rows: { count: number; params: string[] }): Promise<void> {
  const inserted = await tx.query(
    `insert into transfers (id, idempotency_key, request_hash, kind, pending_id, reverses_id, timeout_at, effective_at, metadata, created_at)
     select u.*, $10::timestamptz from unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::uuid[], $6::uuid[],
                          $7::timestamptz[], $8::timestamptz[], $9::jsonb[]) u
     on conflict do nothing
     returning id`,
    rows.params,
  );
  if (inserted.length !== rows.count) throw new Contended();
}

/** Entries are booked at their transfer's instant (`createdAt`, one parameter for the whole batch). */
export async function insertEntries(tx: Queryable, entries: EntryRecord[], createdAt: Date, giveWay: boolean): Promise<void> {
  return sendEntries(tx, await entryRows(entries, createdAt, giveWay));
}

/** The parameters of the entries' insert (built before it is sent, so that it can be sent together with others). */
export async function entryRows(entries: EntryRecord[], createdAt: Date, giveWay: boolean): Promise<string[]> {
  return [
    ...(await pgColumns(
      entries,
      [
        (e) => e.transferId,
        (e) => e.leg,
        (e) => e.accountId,
        (e) => e.assetId,
        (e) => e.side,
        (e) => e.postedAmount,
        (e) => e.pendingAmount,
        (e) => e.balanceAfter,
        (e) => e.effectiveAt.toISOString(),
      ],
      { giveWay },
    )),
    createdAt.toISOString(),
  ];
}

/** Sends the entries' insert at once (src/db/in-order.ts). */
export async function sendEntries(tx: Queryable, params: string[]): Promise<void> {
  await tx.query(
    `insert into entries (transfer_id, leg, account_id, asset_id, side, posted_amount, pending_amount, balance_after, effective_at, created_at)
     select u.*, $10::timestamptz from unnest($1::uuid[], $2::int[], $3::uuid[], $4::uuid[], $5::text[], $6::numeric[], $7::numeric[],
                          $8::numeric[], $9::timestamptz[]) u`,
    params,
  );
}

type BalanceRow = { id: string; balances: { debitsPosted: bigint; creditsPosted: bigint; debitsPending: bigint; creditsPending: bigint } };

/** Sets each account's balance row to its new balances (one statement for the batch). */
export async function updateBalances(tx: Queryable, accounts: BalanceRow[]): Promise<void> {
  return sendBalances(tx, await balanceRows(accounts));
}

/** The parameters of the balances' update. */
export async function balanceRows(accounts: BalanceRow[]): Promise<string[]> {
  // Under the balance locks: no giving way.
  return pgColumns(
    accounts,
    [(a) => a.id, (a) => a.balances.debitsPosted, (a) => a.balances.creditsPosted, (a) => a.balances.debitsPending, (a) => a.balances.creditsPending],
    { giveWay: false },
  );
}

/** Sends the balances' update at once (src/db/in-order.ts). */
export async function sendBalances(tx: Queryable, params: string[]): Promise<void> {
  await tx.query(
    `update account_balances b
        set debits_posted = d.dp, credits_posted = d.cp, debits_pending = d.dpe, credits_pending = d.cpe
       from unnest($1::uuid[], $2::numeric[], $3::numeric[], $4::numeric[], $5::numeric[]) as d(id, dp, cp, dpe, cpe)
      where b.account_id = d.id`,
    params,
  );
}
