import { availableBalance, postedBalance, type Account, type AccountBalance, type Balances, type Entry, type Page, type Side } from "../../domain/accounts.js";
import { bigintDigits } from "../../domain/ids.js";
import { and, asc, eq, gt, sql, type Column, type SQL } from "drizzle-orm";
import type { AccountScope } from "../../domain/access.js";
import type { Queryable } from "../client.js";
import { orm, run } from "../orm.js";
import { accounts } from "../schema/index.js";
import { pgArray } from "../sql-arrays.js";

const ACCOUNT_COLUMNS = `a.id, a.asset_id, a.ref, a.code, a.marketplace_id, a.owner_type, a.owner_id, a.normal_side,
  a.debits_must_not_exceed_credits, a.credits_must_not_exceed_debits, a.metadata, a.opened_by_service, a.created_at`;

interface AccountRow {
  id: string;
  asset_id: string;
  ref: string | null;
  code: string;
  marketplace_id: string | null;
  owner_type: string | null;
  owner_id: string | null;
  normal_side: Side;
  debits_must_not_exceed_credits: boolean;
  credits_must_not_exceed_debits: boolean;
  metadata: Record<string, unknown>;
  opened_by_service: boolean;
  created_at: Date | string;
}

export function toAccount(r: AccountRow): Account {
  return {
    id: r.id,
    assetId: r.asset_id,
    ref: r.ref,
    code: r.code,
    marketplaceId: r.marketplace_id,
    ownerType: r.owner_type,
    ownerId: r.owner_id,
    normalSide: r.normal_side,
    debitsMustNotExceedCredits: r.debits_must_not_exceed_credits,
    creditsMustNotExceedDebits: r.credits_must_not_exceed_debits,
    metadata: r.metadata,
    openedByService: r.opened_by_service,
    createdAt: new Date(r.created_at),
  };
}

export async function getAccount(db: Queryable, id: string): Promise<Account | undefined> {
  return (await getAccounts(db, [id]))[0];
}

export async function getAccounts(db: Queryable, ids: string[]): Promise<Account[]> {
  if (ids.length === 0) return [];
  const rows = await db.query<AccountRow & Record<string, unknown>>(`select ${ACCOUNT_COLUMNS} from accounts a where a.id = any($1::uuid[])`, [pgArray(ids)]);
  return rows.map(toAccount);
}

export interface AccountFilter {
  /** Whose accounts the key sees (domain/access.ts accountScope). */
  scope: AccountScope;
  assetId?: string;
  ref?: string;
  code?: string;
  marketplaceId?: string;
  ownerType?: string;
  ownerId?: string;
  /** id of the last account of the previous page */
  after?: string;
  limit: number;
}

/**
 * Accounts in id order, filtered, within the key's scope. Each scope has its index: the primary key
 * (all accounts), accounts_marketplace_idx (a marketplace's), accounts_owner_idx (an operator's own).
 */
export async function listAccounts(db: Queryable, f: AccountFilter): Promise<Account[]> {
  const a = accounts;
  const is = (column: Column, value: string | undefined): SQL | undefined => (value === undefined ? undefined : eq(column, value));
  const marketplace = f.scope.marketplaceId ?? f.marketplaceId;
  const rows = await run(
    orm(db)
      .select({
        id: a.id,
        asset_id: a.assetId,
        ref: a.ref,
        code: a.code,
        marketplace_id: a.marketplaceId,
        owner_type: a.ownerType,
        owner_id: a.ownerId,
        normal_side: sql<Side>`${a.normalSide}`,
        debits_must_not_exceed_credits: a.debitsMustNotExceedCredits,
        credits_must_not_exceed_debits: a.creditsMustNotExceedDebits,
        metadata: sql<Record<string, unknown>>`${a.metadata}`,
        opened_by_service: a.openedByService,
        created_at: a.createdAt,
      })
      .from(a)
      .where(
        and(
          is(a.marketplaceId, f.scope.marketplaceId),
          f.scope.operatorId === undefined ? undefined : and(eq(a.ownerType, "operator"), eq(a.ownerId, f.scope.operatorId)),
          is(a.assetId, f.assetId),
          is(a.ref, f.ref),
          is(a.code, f.code),
          is(a.marketplaceId, f.marketplaceId),
          // A ref within a marketplace, said as accounts_asset_ref_uq (asset, coalesce(marketplace, ''), ref) says it: one index lookup.
          f.ref === undefined || marketplace === undefined ? undefined : sql`coalesce(${a.marketplaceId}, '') = ${marketplace}`,
          is(a.ownerType, f.ownerType),
          is(a.ownerId, f.ownerId),
          f.after === undefined ? undefined : gt(a.id, f.after),
        ),
      )
      .orderBy(asc(a.id))
      .limit(f.limit),
  );
  return rows.map(toAccount);
}

export async function findAccountByRef(db: Queryable, assetId: string, marketplaceId: string | null, ref: string): Promise<Account | undefined> {
  const rows = await db.query<AccountRow & Record<string, unknown>>(
    `select ${ACCOUNT_COLUMNS} from accounts a
      where a.asset_id = $1 and a.marketplace_id is not distinct from $2 and a.ref = $3`,
    [assetId, marketplaceId, ref],
  );
  return rows[0] && toAccount(rows[0]);
}

function toBalance(accountId: string, side: Side, r: { dp: string; cp: string; dpe: string; cpe: string }): AccountBalance {
  const b: Balances = { debitsPosted: BigInt(r.dp), creditsPosted: BigInt(r.cp), debitsPending: BigInt(r.dpe), creditsPending: BigInt(r.cpe) };
  return { accountId, ...b, posted: postedBalance(side, b), available: availableBalance(side, b) };
}

/** Current balances, from the running totals. */
export async function getBalance(db: Queryable, accountId: string): Promise<AccountBalance | undefined> {
  const rows = await db.query<{ side: Side; dp: string; cp: string; dpe: string; cpe: string }>(
    `select a.normal_side as side, b.debits_posted::text as dp, b.credits_posted::text as cp,
            b.debits_pending::text as dpe, b.credits_pending::text as cpe
       from accounts a join account_balances b on b.account_id = a.id where a.id = $1`,
    [accountId],
  );
  const r = rows[0];
  return r && toBalance(accountId, r.side, r);
}

/**
 * Balances as of an instant of effective time: the sums of the account's entries whose effective_at
 * is at or before `asOf` (so a late record dated in the past changes past balances, as it should).
 */
export async function getBalanceAsOf(db: Queryable, accountId: string, asOf: Date): Promise<AccountBalance | undefined> {
  const rows = await db.query<{ side: Side; dp: string; cp: string; dpe: string; cpe: string }>(
    `select a.normal_side as side,
            coalesce(sum(e.posted_amount) filter (where e.side = 'debit'), 0)::text as dp,
            coalesce(sum(e.posted_amount) filter (where e.side = 'credit'), 0)::text as cp,
            coalesce(sum(e.pending_amount) filter (where e.side = 'debit'), 0)::text as dpe,
            coalesce(sum(e.pending_amount) filter (where e.side = 'credit'), 0)::text as cpe
       from accounts a left join entries e on e.account_id = a.id and e.effective_at <= $2
      where a.id = $1
      group by a.normal_side`,
    [accountId, asOf.toISOString()],
  );
  const r = rows[0];
  return r && toBalance(accountId, r.side, r);
}

const encodeCursor = (id: string) => Buffer.from(`e:${id}`).toString("base64url");

export function decodeCursor(cursor: string): string | undefined {
  const text = Buffer.from(cursor, "base64url").toString();
  return text.startsWith("e:") ? bigintDigits(text.slice(2)) : undefined;
}

/**
 * An account's entries in recording order with the running posted balance after each. The cursor
 * is the last entry id seen: entries of one account are written under its balance lock, so their
 * ids rise in commit order and a page never skips a row that commits later.
 */
export async function listEntries(
  db: Queryable,
  accountId: string,
  options: { cursor?: string; limit?: number; order?: "asc" | "desc" } = {},
): Promise<Page<Entry>> {
  const limit = options.limit ?? 100;
  const order = options.order ?? "asc";
  const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
  if (options.cursor !== undefined && after === undefined) throw new RangeError("invalid cursor");
  const cmp = order === "asc" ? ">" : "<";
  const rows = await db.query<{
    id: string;
    transfer_id: string;
    leg: number;
    side: Side;
    posted_amount: string;
    pending_amount: string;
    balance_after: string;
    effective_at: Date | string;
    created_at: Date | string;
  }>(
    `select id::text as id, transfer_id, leg, side, posted_amount::text as posted_amount, pending_amount::text as pending_amount,
            balance_after::text as balance_after, effective_at, created_at
       from entries
      where account_id = $1 ${after === undefined ? "" : `and id ${cmp} $3::bigint`}
      order by entries.id ${order}
      limit $2`,
    after === undefined ? [accountId, limit + 1] : [accountId, limit + 1, after],
  );
  const items = rows.slice(0, limit).map((r) => ({
    id: r.id,
    transferId: r.transfer_id,
    leg: r.leg,
    side: r.side,
    postedAmount: BigInt(r.posted_amount),
    pendingAmount: BigInt(r.pending_amount),
    balanceAfter: BigInt(r.balance_after),
    effectiveAt: new Date(r.effective_at),
    createdAt: new Date(r.created_at),
  }));
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && last ? encodeCursor(last.id) : null };
}

/** Inserts an account; undefined when its id, or its ref in its asset and marketplace, is taken. */
export async function insertAccount(
  tx: Queryable,
  a: {
    id: string;
    assetId: string;
    ref: string | null;
    code: string;
    ownerType: string | null;
    ownerId: string | null;
    normalSide: Side;
    debitsMustNotExceedCredits: boolean;
    creditsMustNotExceedDebits: boolean;
    metadataJson: string;
    marketplaceId: string | null;
  },
): Promise<Account | undefined> {
  const rows = await tx.query<AccountRow & Record<string, unknown>>(
    `insert into accounts (id, asset_id, ref, code, owner_type, owner_id, normal_side,
                             debits_must_not_exceed_credits, credits_must_not_exceed_debits, metadata, marketplace_id)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::text::jsonb, $11)
       on conflict do nothing
       returning *`,
    [
      a.id,
      a.assetId,
      a.ref,
      a.code,
      a.ownerType,
      a.ownerId,
      a.normalSide,
      a.debitsMustNotExceedCredits,
      a.creditsMustNotExceedDebits,
      a.metadataJson,
      a.marketplaceId,
    ],
  );
  return rows[0] && toAccount(rows[0]);
}

/** The zero balances of a new account. */
export async function insertAccountBalances(tx: Queryable, accountId: string): Promise<void> {
  await tx.query("insert into account_balances (account_id) values ($1)", [accountId]);
}

/**
 * The available balance (credits posted − debits posted − debits pending) of the service's own
 * account (no marketplace) with this ref in an asset, such as an operator's payable.
 */
export async function getServiceAccountAvailable(db: Queryable, assetId: string, ref: string): Promise<bigint | undefined> {
  const [b] = await db.query<{ available: string }>(
    `select (b.credits_posted - b.debits_posted - b.debits_pending)::text as available
       from accounts a join account_balances b on b.account_id = a.id
      where a.asset_id = $1 and a.marketplace_id is null and a.ref = $2 and a.opened_by_service`,
    [assetId, ref],
  );
  return b && BigInt(b.available);
}

/**
 * What each account may still be debited (credits posted + overdraft limit − debits posted and
 * pending) and its overdraft limit, as decimal strings.
 */
export async function getDebitHeadroom(db: Queryable, accountIds: string[]): Promise<{ id: string; left: string; od: string }[]> {
  if (accountIds.length === 0) return [];
  return db.query<{ id: string; left: string; od: string }>(
    `select account_id as id, (credits_posted + overdraft_limit - debits_posted - debits_pending)::text as left, overdraft_limit::text as od
       from account_balances where account_id = any($1::uuid[])`,
    [pgArray(accountIds)],
  );
}
