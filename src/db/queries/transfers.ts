import { and, desc, eq, exists, gte, inArray, isNotNull, lt, ne, notExists, or, sql, type Column, type SQL } from "drizzle-orm";
import { alias, QueryBuilder } from "drizzle-orm/pg-core";
import type { AccountScope } from "../../domain/access.js";
import type { Page } from "../../domain/accounts.js";
import { type LegRecord, statusOf, type Transfer, type TransferStatus } from "../../domain/posting.js";
import type { TransferKind } from "../../domain/transfers.js";
import type { Queryable } from "../client.js";
import { orm, run } from "../orm.js";
import { accounts, entries, transfers } from "../schema/index.js";
import { pgArray } from "../sql-arrays.js";
import { bigintDigits } from "../../domain/ids.js";

interface TransferRow {
  id: string;
  idempotency_key: string;
  request_hash: string;
  kind: TransferKind;
  pending_id: string | null;
  reverses_id: string | null;
  timeout_at: Date | string | null;
  effective_at: Date | string;
  created_at: Date | string;
  metadata: Record<string, unknown>;
  legs: { leg: number; side: "debit" | "credit"; account_id: string; asset_id: string; posted_amount: string; pending_amount: string }[];
  resolution: TransferKind | null;
  reversed: boolean;
}

// What a transfer `t` is made of besides its own row: its legs, the transfer that resolved it (if
// pending) and whether it was reversed (domain/posting.ts statusOf makes its status of these).
const LEGS_OF_T = `(select json_agg(json_build_object('leg', e.leg, 'side', e.side, 'account_id', e.account_id,
                   'asset_id', e.asset_id, 'posted_amount', e.posted_amount::text,
                   'pending_amount', e.pending_amount::text) order by e.leg, e.side desc)
            from entries e where e.transfer_id = t.id)`;
const RESOLUTION_OF_T = "(select r.kind from transfers r where r.pending_id = t.id)";
// A scalar subquery rather than exists(): a list would have PostgreSQL hash every reversal of the
// journal for it (an exists in a select list may become a hashed subplan); at most one row matches.
const REVERSED_OF_T = "((select true from transfers r where r.reverses_id = t.id) is not null)";

const SELECT_TRANSFERS = `
  select t.id, t.idempotency_key, t.request_hash, t.kind, t.pending_id, t.reverses_id,
         t.timeout_at, t.effective_at, t.created_at, t.metadata,
         ${LEGS_OF_T} as legs,
         ${RESOLUTION_OF_T} as resolution,
         ${REVERSED_OF_T} as reversed
    from transfers t`;

export async function loadTransfers(db: Queryable, ids: string[]): Promise<Map<string, Transfer>> {
  const out = new Map<string, Transfer>();
  if (ids.length === 0) return out;
  const rows = await db.query<TransferRow & Record<string, unknown>>(`${SELECT_TRANSFERS} where t.id = any($1::uuid[])`, [pgArray(ids)]);
  for (const row of rows) out.set(row.id, toTransfer(row));
  return out;
}

export async function getTransfer(db: Queryable, id: string): Promise<Transfer | undefined> {
  return (await loadTransfers(db, [id])).get(id);
}

const date = (v: Date | string) => (v instanceof Date ? v : new Date(v));

function toTransfer(row: TransferRow): Transfer {
  const legs: LegRecord[] = [];
  for (const e of row.legs ?? []) {
    const leg = (legs[e.leg] ??= {
      debitAccountId: "",
      creditAccountId: "",
      assetId: e.asset_id,
      postedAmount: BigInt(e.posted_amount),
      pendingAmount: BigInt(e.pending_amount),
    });
    if (e.side === "debit") leg.debitAccountId = e.account_id;
    else leg.creditAccountId = e.account_id;
  }
  return {
    id: row.id,
    idempotencyKey: row.idempotency_key,
    requestHash: row.request_hash,
    kind: row.kind,
    pendingId: row.pending_id,
    reversesId: row.reverses_id,
    timeoutAt: row.timeout_at === null ? null : date(row.timeout_at),
    effectiveAt: date(row.effective_at),
    createdAt: date(row.created_at),
    metadata: row.metadata,
    legs,
    status: statusOf(row.kind, row.resolution, row.reversed),
  };
}

const encodeTransferCursor = (seq: string) => Buffer.from(`t:${seq}`).toString("base64url");

/** The recording position a transfer list's cursor stands for; undefined when it is not a cursor listTransfers made. */
export function decodeTransferCursor(cursor: string): bigint | undefined {
  const text = Buffer.from(cursor, "base64url").toString();
  const seq = text.startsWith("t:") ? bigintDigits(text.slice(2)) : undefined;
  return seq === undefined ? undefined : BigInt(seq);
}

export interface TransferFilter {
  /** Whose transfers the key sees (domain/access.ts accountScope): those touching an account of the scope. */
  scope: AccountScope;
  /** Transfers with a leg on this account. */
  accountId?: string;
  /** Transfers with a leg in this asset. */
  assetId?: string;
  status?: TransferStatus;
  /** effective_at in [from, to) */
  from?: Date;
  to?: Date;
  cursor?: string;
  limit: number;
}

const t = alias(transfers, "t");
const r = alias(transfers, "r");
// Builds the subqueries of the conditions below (they run as part of the list's one statement).
const qb = new QueryBuilder();
const entriesOfT = (where: SQL | undefined) =>
  qb
    .select({ one: sql`1` })
    .from(entries)
    .where(and(eq(entries.transferId, t.id), where));
const entriesOfTOn = (where: SQL | undefined) =>
  qb
    .select({ one: sql`1` })
    .from(entries)
    .innerJoin(accounts, eq(accounts.id, entries.accountId))
    .where(and(eq(entries.transferId, t.id), where));

/** Kinds whose status is posted, or reversed once a reversal names them (statusOf's default case). */
const POSTING_KINDS: TransferKind[] = ["standard", "post_pending", "reversal"];

/**
 * `t` has this status: statusOf (domain/posting.ts) over the same resolution and reversal the row
 * shows, so that a page filtered by status is as long as asked. Under an OR, scalar subqueries (each
 * through its unique index): an exists() there may be run by hashing the whole journal. Alone,
 * exists(): the planner may then start from the few reversals or look for the few pending ones.
 */
function statusIs(status: TransferStatus): SQL | undefined {
  const resolution = sql.raw(RESOLUTION_OF_T);
  const pendingResolvedAs = (kind: TransferKind) => and(eq(t.kind, "pending"), sql`${resolution} = ${kind}`);
  const resolutionOrReversal = (column: Column) =>
    qb
      .select({ one: sql`1` })
      .from(r)
      .where(eq(column, t.id));
  switch (status) {
    case "pending":
      return and(eq(t.kind, "pending"), notExists(resolutionOrReversal(r.pendingId)));
    case "posted":
      return or(and(inArray(t.kind, POSTING_KINDS), sql`not ${sql.raw(REVERSED_OF_T)}`), pendingResolvedAs("post_pending"));
    case "voided":
      return or(eq(t.kind, "void_pending"), pendingResolvedAs("void_pending"));
    case "expired":
      return or(eq(t.kind, "expire_pending"), pendingResolvedAs("expire_pending"));
    case "reversed":
      return and(inArray(t.kind, POSTING_KINDS), exists(resolutionOrReversal(r.reversesId)));
  }
}

/** The instant is in [from, to) (either bound may be absent). */
const within = (at: Column, p: { from?: Date; to?: Date }) => and(p.from && gte(at, p.from), p.to && lt(at, p.to));

/**
 * `t` touches an account of the scope and the accounts of one marketplace at most: the rule of a
 * read by id (domain/access.ts canSeeTransfer).
 */
function inScope(scope: AccountScope): SQL | undefined {
  if (scope.marketplaceId !== undefined)
    return and(
      exists(entriesOfTOn(eq(accounts.marketplaceId, scope.marketplaceId))),
      notExists(entriesOfTOn(and(isNotNull(accounts.marketplaceId), ne(accounts.marketplaceId, scope.marketplaceId)))),
    );
  if (scope.operatorId !== undefined)
    return and(
      exists(entriesOfTOn(and(eq(accounts.ownerType, "operator"), eq(accounts.ownerId, scope.operatorId)))),
      sql`(select count(distinct ${accounts.marketplaceId}) from ${entries} inner join ${accounts} on ${accounts.id} = ${entries.accountId}
            where ${entries.transferId} = ${t.id}) <= 1`,
    );
  return undefined;
}

/**
 * Transfers, newest recorded first (by seq), filtered, within the key's scope, each as a read by id
 * answers it, in one statement. PostgreSQL walks transfers_seq_uq backwards checking each transfer
 * through entries_transfer_idx, or, for an account or a scope with few entries, starts from them
 * (entries_account_effective_idx). A cursor is the position of the last transfer of the page before.
 */
export async function listTransfers(db: Queryable, f: TransferFilter): Promise<Page<Transfer>> {
  const before = f.cursor === undefined ? undefined : decodeTransferCursor(f.cursor);
  if (f.cursor !== undefined && before === undefined) throw new RangeError("invalid cursor");
  const rows = await run(
    orm(db)
      .select({
        seq: sql<string>`${t.seq}::text`,
        id: t.id,
        idempotency_key: t.idempotencyKey,
        request_hash: t.requestHash,
        kind: sql<TransferKind>`${t.kind}`,
        pending_id: t.pendingId,
        reverses_id: t.reversesId,
        timeout_at: t.timeoutAt,
        effective_at: t.effectiveAt,
        created_at: t.createdAt,
        metadata: sql<Record<string, unknown>>`${t.metadata}`,
        legs: sql<TransferRow["legs"]>`${sql.raw(LEGS_OF_T)}`,
        resolution: sql<TransferKind | null>`${sql.raw(RESOLUTION_OF_T)}`,
        reversed: sql<boolean>`${sql.raw(REVERSED_OF_T)}`,
      })
      .from(t)
      .where(
        and(
          inScope(f.scope),
          // The period again on the account's entries (booked at their transfer's effective_at): entries_account_effective_idx.
          f.accountId === undefined ? undefined : exists(entriesOfT(and(eq(entries.accountId, f.accountId), within(entries.effectiveAt, f)))),
          f.assetId === undefined ? undefined : exists(entriesOfT(eq(entries.assetId, f.assetId))),
          f.status === undefined ? undefined : statusIs(f.status),
          within(t.effectiveAt, f),
          before === undefined ? undefined : lt(t.seq, before),
        ),
      )
      .orderBy(desc(t.seq))
      .limit(f.limit + 1),
  );
  const items = rows.slice(0, f.limit);
  const last = items[items.length - 1];
  return { items: items.map(toTransfer), nextCursor: rows.length > f.limit && last ? encodeTransferCursor(last.seq) : null };
}
