import type { Queryable } from "../client.js";
import { bigintDigits } from "../../domain/ids.js";

/**
 * Per asset: the operator's payable account (the global account of the chart, ref
 * operator:{id}:payable, never one a marketplace opened) and what its usage earned.
 */
export async function operatorBalances(db: Queryable, operatorId: string) {
  return db.query<{
    asset_id: string;
    asset_code: string;
    scale: number;
    account_id: string;
    debits_posted: string;
    credits_posted: string;
    debits_pending: string;
    credits_pending: string;
    earned: string;
    in_transit: string;
    paid_out: string;
  }>(
    `select s.id as asset_id, s.code as asset_code, s.scale, a.id as account_id,
            b.debits_posted::text, b.credits_posted::text, b.debits_pending::text, b.credits_pending::text,
            coalesce((select sum(e.amount) from operator_earned e where e.operator_id = $1 and e.asset_id = s.id), 0)::text as earned,
            coalesce((select sum(p.amount) from payouts p where p.operator_id = $1 and p.asset_id = s.id and p.status in ('signed', 'submitted')), 0)::text as in_transit,
            coalesce((select sum(p.amount) from payouts p where p.operator_id = $1 and p.asset_id = s.id and p.status = 'confirmed'), 0)::text as paid_out
       from accounts a join account_balances b on b.account_id = a.id join assets s on s.id = a.asset_id
      where a.opened_by_service and a.marketplace_id is null and a.ref = 'operator:' || $1 || ':payable'
      order by s.code`,
    [operatorId],
  );
}

/**
 * Folds the parts of operator_earned into one per marketplace, operator and asset (the workers do it
 * behind the writers, so a balance read sums a few rows); returns how many parts went.
 */
export async function foldOperatorEarned(db: Queryable): Promise<number> {
  const [row] = await db.query<{ removed: string }>("select fold_operator_earned()::text as removed");
  return Number(row!.removed);
}

/** A line of an operator's statement (operatorStatement). */
export interface StatementRow {
  id: string;
  asset_id: string;
  asset_code: string;
  scale: number;
  transfer_id: string;
  side: "debit" | "credit";
  posted_amount: string;
  balance_after: string;
  effective_at: Date | string;
  created_at: Date | string;
  description: string | null;
  payout_id: string | null;
  tx_hash: string | null;
  external_reference: string | null;
}

/** A statement's cursor: the last entry of the page before (its position in the statement's order). */
export const encodeStatementCursor = (entryId: string) => Buffer.from(`s:${entryId}`).toString("base64url");

export function decodeStatementCursor(cursor: string): string | undefined {
  const text = Buffer.from(cursor, "base64url").toString();
  return text.startsWith("s:") ? bigintDigits(text.slice(2)) : undefined;
}

/** Whether the entry is on one of the operator's payable accounts (of the asset, when given): a cursor of this statement. */
export async function isStatementEntry(db: Queryable, operatorId: string, entryId: string, assetId?: string): Promise<boolean> {
  const rows = await db.query<{ id: string }>(
    `select e.id::text as id from entries e join accounts a on a.id = e.account_id
      where e.id = $2::bigint and a.opened_by_service and a.marketplace_id is null and a.ref = 'operator:' || $1 || ':payable'
        and ($3::uuid is null or a.asset_id = $3)`,
    [operatorId, entryId, assetId ?? null],
  );
  return rows.length > 0;
}

/**
 * The posted entries of the operator's payable accounts effective in [from, to), by asset, in
 * effective order (ties by entry id), with the balance after each in that order, after the entry
 * `after` (a page's cursor) and at most `limit` of them. A reversal is effective when the usage it
 * reverses was, so a corrected record and its correction sit in the same period (docs/usage.md,
 * "Where a correction lands"); `created_at` is when each was booked.
 *
 * The balance after a line is the sum of every entry of its account up to it in effective order
 * (all of them before `from`, then the period's up to the line): a later page starts from that sum
 * at its cursor's entry, recomputed rather than carried in the cursor (which a client could alter),
 * so its running balance is the one the whole statement shows, whatever page the line falls on. A line that pays a payout (its hold posted) names the payout, with the chain
 * transaction's hash or the off-chain payment's reference.
 */
export async function operatorStatement(
  db: Queryable,
  operatorId: string,
  period: { from: Date; to: Date },
  options: { assetId?: string; after?: string; limit: number },
): Promise<StatementRow[]> {
  return db.query<StatementRow>(
    `with acct as (select a.id, a.asset_id from accounts a
                    where a.opened_by_service and a.marketplace_id is null and a.ref = 'operator:' || $1 || ':payable' and ($4::uuid is null or a.asset_id = $4)),
          pos as (select e.account_id, e.asset_id, e.effective_at, e.id from entries e join acct on acct.id = e.account_id where e.id = $5::bigint),
          -- Where each account's lines start: after the cursor entry on its account, else at from
          -- ((effective_at, id) <= (from, 0) is "effective before from": entry ids start at 1).
          start as (select acct.id, coalesce(cur.effective_at, $2::timestamptz) as at, coalesce(cur.id, 0) as entry_id
                      from acct left join pos cur on cur.account_id = acct.id and (cur.effective_at, cur.id) > ($2::timestamptz, 0::bigint)),
          opening as (select start.id, coalesce((select sum(case when e.side = 'credit' then e.posted_amount else -e.posted_amount end)
                                                   from entries e
                                                  where e.account_id = start.id and e.effective_at <= start.at
                                                    and (e.effective_at, e.id) <= (start.at, start.entry_id)), 0) as balance
                        from start)
     select e.id::text as id, e.asset_id, s.code as asset_code, s.scale, e.transfer_id, e.side, e.posted_amount::text,
            (o.balance + sum(case when e.side = 'credit' then e.posted_amount else -e.posted_amount end)
                           over (partition by e.account_id order by e.effective_at, e.id))::text as balance_after,
            e.effective_at, t.created_at,
            coalesce(t.metadata #>> '{usage,external_id}', t.metadata #>> '{usage_reversal,reason}',
                     case when t.metadata ? 'clawback' then 'clawback: paid earnings taken back, owed to the platform'
                          when t.metadata ? 'receivable_recovery' then 'recovery of what is owed to the platform' end, t.kind) as description,
            p.id as payout_id, p.tx_hash, p.external_reference
       from acct join opening o on o.id = acct.id join entries e on e.account_id = acct.id
       join assets s on s.id = e.asset_id join transfers t on t.id = e.transfer_id
       left join payouts p on p.hold_transfer_id = t.pending_id
       left join pos on true
      where e.effective_at >= $2 and e.effective_at < $3 and e.posted_amount > 0
        and (pos.id is null or (e.asset_id, e.effective_at, e.id) > (pos.asset_id, pos.effective_at, pos.id))
      order by e.asset_id, e.effective_at, e.id
      limit $6`,
    [operatorId, period.from.toISOString(), period.to.toISOString(), options.assetId ?? null, options.after ?? null, options.limit],
  );
}

/** The posted balance of each of the operator's payable accounts from the entries effective before `at`, with its asset's scale. */
export async function operatorOpeningBalances(db: Queryable, operatorId: string, at: Date) {
  return db.query<{ asset_id: string; scale: number; balance: string }>(
    `select a.asset_id, s.scale,
            coalesce((select sum(case when e.side = 'credit' then e.posted_amount else -e.posted_amount end)
                        from entries e where e.account_id = a.id and e.effective_at < $2), 0)::text as balance
       from accounts a join assets s on s.id = a.asset_id
      where a.opened_by_service and a.marketplace_id is null and a.ref = 'operator:' || $1 || ':payable'`,
    [operatorId, at.toISOString()],
  );
}

export type EarningsGroup = "day" | "week" | "month" | "resource" | "marketplace";

/**
 * Usage of the operator effective in [from, to) less the reversals effective in it (a reversal counts
 * when it is effective: a late one in the month it was booked in, so a closed month does not change),
 * grouped; one row per group, asset and unit, and per resource too with `byResource` (a week is named
 * by its Monday, UTC).
 */
export async function operatorEarnings(db: Queryable, operatorId: string, from: Date, to: Date, groupBy: EarningsGroup, byResource = false) {
  const key = {
    day: "to_char(u.at at time zone 'UTC', 'YYYY-MM-DD')",
    week: "to_char(date_trunc('week', u.at at time zone 'UTC'), 'YYYY-MM-DD')",
    month: "to_char(u.at at time zone 'UTC', 'YYYY-MM')",
    resource: "u.resource",
    marketplace: "u.marketplace_id",
  }[groupBy];
  const resource = byResource || groupBy === "resource" ? "u.resource" : "null::text";
  return db.query<{
    group_key: string;
    asset_id: string;
    asset_code: string;
    scale: number;
    unit: string;
    records: string;
    quantity: string;
    gross: string;
    net: string;
    resource: string | null;
  }>(
    `with u as (
       select u.effective_at as at, u.resource, u.marketplace_id, u.asset_id, u.unit, 1 as n, u.quantity, u.gross, u.net
         from usage_records u where u.operator_id = $1 and u.effective_at >= $2 and u.effective_at < $3
       union all
       select r.effective_at, u.resource, u.marketplace_id, u.asset_id, u.unit, -1, -u.quantity, -u.gross, -u.net
         from usage_records u join transfers r on r.reverses_id = u.transfer_id
        where u.operator_id = $1 and r.effective_at >= $2 and r.effective_at < $3)
     select ${key} as group_key, u.asset_id, s.code as asset_code, s.scale, u.unit, ${resource} as resource, sum(u.n)::text as records,
            sum(u.quantity)::text as quantity, sum(u.gross)::text as gross, sum(u.net)::text as net
       from u join assets s on s.id = u.asset_id
      group by 1, 2, 3, 4, 5, 6
     having sum(u.n) <> 0 or sum(u.net) <> 0
      order by 1, 6, 3, 5`,
    [operatorId, from.toISOString(), to.toISOString()],
  );
}
