import type { Queryable } from "../client.js";
import { pgArray } from "../sql-arrays.js";
import { fundingLockKey, poolSql } from "./funding.js";

/**
 * Funding marks (usage_funding_marks, usage_funding_mark_customers; docs/ledger.md "The funding
 * mark"): per marketplace and asset, the gross per customer of its usage records up to a
 * funding_seq, so that a funding judgment walks only the records after it.
 */

/**
 * The marketplaces and assets whose customers have debits, with what their pool holds (settlements
 * and credit limit) and `debits`: the one-row bound of what their usage could need beyond their
 * customers' money (customersDebitsBound: the debits plus what was converted out of the asset).
 */
export async function markCandidates(db: Queryable): Promise<Array<{ marketplace_id: string; asset_id: string; available: string; debits: string }>> {
  return db.query(
    `select t.marketplace_id, t.asset_id,
            (t.debits_posted + ${poolSql.convertedOut("t.marketplace_id", "t.asset_id")})::text as debits,
            (${poolSql.settled("t.marketplace_id", "t.asset_id")} + ${poolSql.creditLimit("t.marketplace_id", "t.asset_id")})::text as available
       from customer_debit_totals t where t.debits_posted > 0 order by t.marketplace_id, t.asset_id`,
  );
}

/**
 * While the marketplace is writing usage: the last funding_seq drawn so far, then the transactions
 * (virtual transaction ids) holding its funding lock. Usage takes that lock before it draws
 * funding_seq and keeps it to its end, so every record of the marketplace up to `top` is either
 * committed or being written by one of `writers`: once none of them runs any more
 * (fundingWritersRunning), every record up to `top` is committed or gone, and every later one
 * draws more. Read in this order (the sequence first); constant time.
 */
export async function fundingTopWhileWriting(db: Queryable, marketplaceId: string): Promise<{ top: bigint; writers: string[] }> {
  const top = await lastFundingSeq(db);
  const [row] = await db.query<{ writers: string[] }>(
    `select coalesce(array_agg(l.virtualtransaction::text), '{}') as writers
       from pg_locks l, (select hashtextextended($1, 0) as k) key
      where l.locktype = 'advisory' and l.granted and l.database = (select oid from pg_database where datname = current_database())
        and l.classid::bigint = (key.k >> 32) & 4294967295 and l.objid::bigint = key.k & 4294967295 and l.objsubid = 1`,
    [fundingLockKey(marketplaceId)],
  );
  return { top, writers: row!.writers };
}

/** Whether any of these transactions (virtual transaction ids) still runs: each holds the lock of its own id to its end. */
export async function fundingWritersRunning(db: Queryable, writers: string[]): Promise<boolean> {
  if (writers.length === 0) return false;
  const [row] = await db.query<{ running: boolean }>(
    "select exists (select 1 from pg_locks where locktype = 'virtualxid' and virtualxid = any($1::text[])) as running",
    [pgArray(writers)],
  );
  return row!.running;
}

/**
 * The last funding_seq drawn so far, by any marketplace (0 before the first): read in constant time
 * from the sequence. Read after the marketplace's funding lock was taken in exclusive mode, every record
 * of that marketplace up to it is committed, and every record it writes later draws more.
 */
export async function lastFundingSeq(tx: Queryable): Promise<bigint> {
  const [row] = await tx.query<{ top: string }>(
    "select coalesce(pg_sequence_last_value(pg_get_serial_sequence('usage_records', 'funding_seq')::regclass), 0)::text as top",
  );
  return BigInt(row!.top);
}

/**
 * The mark's funding_seq, for the step that moves it (0 when there is none), under a lock of the
 * marketplace's mark in the asset held to the commit: two steps at once (two worker processes)
 * would otherwise both read the same start, a missing mark's included, and add the same records twice.
 */
export async function lockFundingMark(tx: Queryable, marketplaceId: string, assetId: string): Promise<bigint> {
  await tx.query("select set_config('ledger.marking_usage_funding', 'on', true), pg_advisory_xact_lock(hashtextextended($1, 0))", [
    `usage-funding-mark:${marketplaceId}:${assetId}`,
  ]);
  const [row] = await tx.query<{ w: string }>("select funding_seq::text as w from usage_funding_marks where marketplace_id = $1 and asset_id = $2 for update", [
    marketplaceId,
    assetId,
  ]);
  return row ? BigInt(row.w) : 0n;
}

/** The mark's funding_seq without a lock (0 when there is none). */
export async function fundingMarkOf(db: Queryable, marketplaceId: string, assetId: string): Promise<bigint> {
  const [row] = await db.query<{ w: string }>("select funding_seq::text as w from usage_funding_marks where marketplace_id = $1 and asset_id = $2", [
    marketplaceId,
    assetId,
  ]);
  return row ? BigInt(row.w) : 0n;
}

/**
 * Moves the mark (locked with lockFundingMark) from `from` to `to`: forward, it adds the gross of
 * the records in (from, to] to each customer's part; back (the money no longer funds every record
 * up to the mark), it counts the parts again up to `to`; to 0, it removes the mark.
 */
export async function moveFundingMark(tx: Queryable, m: { marketplaceId: string; assetId: string; from: bigint; to: bigint; at: Date }): Promise<void> {
  const key = [m.marketplaceId, m.assetId];
  if (m.to < m.from) await tx.query("delete from usage_funding_mark_customers where marketplace_id = $1 and asset_id = $2", key);
  if (m.to === 0n) {
    await tx.query("delete from usage_funding_marks where marketplace_id = $1 and asset_id = $2", key);
    return;
  }
  const after = m.to < m.from ? 0n : m.from;
  await tx.query(
    `insert into usage_funding_mark_customers (marketplace_id, asset_id, customer_id, gross)
     select $1, $2, customer_id, sum(gross) from usage_records
      where marketplace_id = $1 and asset_id = $2 and funding_seq > $3 and funding_seq <= $4
      group by customer_id
     on conflict (marketplace_id, asset_id, customer_id) do update set gross = usage_funding_mark_customers.gross + excluded.gross`,
    [...key, after.toString(), m.to.toString()],
  );
  await tx.query(
    `insert into usage_funding_marks (marketplace_id, asset_id, funding_seq, updated_at) values ($1, $2, $3, $4)
     on conflict (marketplace_id, asset_id) do update set funding_seq = excluded.funding_seq, updated_at = excluded.updated_at`,
    [...key, m.to.toString(), m.at.toISOString()],
  );
}

/** Brings the BRIN index on usage_records.funding_seq up to date, so that the records after a mark are found by their pages. */
export async function summarizeFundingSeqRanges(db: Queryable): Promise<void> {
  await db.query("select brin_summarize_new_values('usage_records_funding_seq_idx'::regclass)");
}

/**
 * Marks whose parts differ from the gross per customer of the records up to them, or that name a
 * funding_seq never drawn: a judgment would walk from a wrong start.
 */
export async function findFundingMarkMismatches(db: Queryable) {
  return db.query<{ marketplace_id: string; asset_id: string; customer_id: string; stored: string; actual: string }>(`
    with s as (
      select u.marketplace_id, u.asset_id, u.customer_id, sum(u.gross) as gross
        from usage_funding_marks m join usage_records u on u.marketplace_id = m.marketplace_id and u.asset_id = m.asset_id and u.funding_seq <= m.funding_seq
       group by u.marketplace_id, u.asset_id, u.customer_id)
    select coalesce(s.marketplace_id, k.marketplace_id) as marketplace_id, coalesce(s.asset_id, k.asset_id)::text as asset_id,
           coalesce(s.customer_id, k.customer_id) as customer_id, coalesce(k.gross, 0)::text as stored, coalesce(s.gross, 0)::text as actual
      from s full join usage_funding_mark_customers k on k.marketplace_id = s.marketplace_id and k.asset_id = s.asset_id and k.customer_id = s.customer_id
     where coalesce(k.gross, 0) <> coalesce(s.gross, 0)
        or not exists (select 1 from usage_funding_marks m where m.marketplace_id = coalesce(s.marketplace_id, k.marketplace_id) and m.asset_id = coalesce(s.asset_id, k.asset_id))
    union all
    select m.marketplace_id, m.asset_id::text, '' as customer_id, m.funding_seq::text,
           coalesce(pg_sequence_last_value(pg_get_serial_sequence('usage_records', 'funding_seq')::regclass), 0)::text
      from usage_funding_marks m
     where m.funding_seq > coalesce(pg_sequence_last_value(pg_get_serial_sequence('usage_records', 'funding_seq')::regclass), 0)`);
}
