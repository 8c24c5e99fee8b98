import type { Queryable } from "../client.js";

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
            coalesce((select sum(u.net) from usage_records u
                       where u.operator_id = $1 and u.asset_id = s.id
                         and not exists (select 1 from transfers r where r.reverses_id = u.transfer_id)), 0)::text as earned,
            coalesce((select sum(p.amount) from payouts p where p.operator_id = $1 and p.asset_id = s.id and p.status in ('signed', 'submitted')), 0)::text as in_transit,
            coalesce((select sum(p.amount) from payouts p where p.operator_id = $1 and p.asset_id = s.id and p.status = 'confirmed'), 0)::text as paid_out
       from accounts a join account_balances b on b.account_id = a.id join assets s on s.id = a.asset_id
      where a.opened_by_service and a.marketplace_id is null and a.ref = 'operator:' || $1 || ':payable'
      order by s.code`,
    [operatorId],
  );
}

/**
 * The posted entries of the operator's payable accounts effective in [from, to), in effective order,
 * with the balance after each in that order (the opening balance plus the lines before it). A
 * reversal is effective when the usage it reverses was, so a corrected record and its correction
 * sit in the same period (docs/usage.md, "Where a correction lands"); `created_at` is when each was
 * booked.
 */
export async function operatorStatement(db: Queryable, operatorId: string, from: Date, to: Date, assetId?: string) {
  return db.query<{
    id: string;
    asset_id: string;
    asset_code: string;
    transfer_id: string;
    side: "debit" | "credit";
    posted_amount: string;
    balance_after: string;
    effective_at: Date | string;
    created_at: Date | string;
    description: string | null;
  }>(
    `with acct as (select a.id, a.asset_id from accounts a
                    where a.opened_by_service and a.marketplace_id is null and a.ref = 'operator:' || $1 || ':payable' and ($4::uuid is null or a.asset_id = $4)),
          opening as (select acct.id, coalesce((select sum(case when e.side = 'credit' then e.posted_amount else -e.posted_amount end)
                                                  from entries e where e.account_id = acct.id and e.effective_at < $2), 0) as balance from acct)
     select e.id::text as id, e.asset_id, s.code as asset_code, e.transfer_id, e.side, e.posted_amount::text,
            (o.balance + sum(case when e.side = 'credit' then e.posted_amount else -e.posted_amount end)
                           over (partition by e.account_id order by e.effective_at, e.id))::text as balance_after,
            e.effective_at, t.created_at,
            coalesce(t.metadata #>> '{usage,external_id}', t.metadata #>> '{usage_reversal,reason}', t.kind) as description
       from acct join opening o on o.id = acct.id join entries e on e.account_id = acct.id
       join assets s on s.id = e.asset_id join transfers t on t.id = e.transfer_id
      where e.effective_at >= $2 and e.effective_at < $3 and e.posted_amount > 0
      order by e.asset_id, e.effective_at, e.id
      limit 100001`,
    [operatorId, from.toISOString(), to.toISOString(), assetId ?? null],
  );
}

/** The posted balance of each of the operator's payable accounts from the entries effective before `at`. */
export async function operatorOpeningBalances(db: Queryable, operatorId: string, at: Date) {
  return db.query<{ asset_id: string; balance: string }>(
    `select a.asset_id,
            coalesce((select sum(case when e.side = 'credit' then e.posted_amount else -e.posted_amount end)
                        from entries e where e.account_id = a.id and e.effective_at < $2), 0)::text as balance
       from accounts a where a.opened_by_service and a.marketplace_id is null and a.ref = 'operator:' || $1 || ':payable'`,
    [operatorId, at.toISOString()],
  );
}

export type EarningsGroup = "day" | "resource" | "marketplace";

/** Usage of the operator effective in [from, to), not reversed, grouped; one row per group, asset and unit. */
export async function operatorEarnings(db: Queryable, operatorId: string, from: Date, to: Date, groupBy: EarningsGroup) {
  const key = { day: "to_char(u.effective_at at time zone 'UTC', 'YYYY-MM-DD')", resource: "u.resource", marketplace: "u.marketplace_id" }[groupBy];
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
  }>(
    `select ${key} as group_key, u.asset_id, s.code as asset_code, s.scale, u.unit, count(*)::text as records,
            sum(u.quantity)::text as quantity, sum(u.gross)::text as gross, sum(u.net)::text as net
       from usage_records u join assets s on s.id = u.asset_id
      where u.operator_id = $1 and u.effective_at >= $2 and u.effective_at < $3
        and not exists (select 1 from transfers r where r.reverses_id = u.transfer_id)
      group by 1, 2, 3, 4, 5
      order by 1, 3, 5`,
    [operatorId, from.toISOString(), to.toISOString()],
  );
}
