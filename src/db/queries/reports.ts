import type { Queryable } from "../client.js";

/**
 * Every account's posted debits and credits, now (from the balance rows) or as of an instant of
 * effective time (from the entries effective until then, corrections included with what they
 * correct: docs/reconciliation.md), with its asset. Pending amounts are not part of a trial balance.
 */
export async function trialBalance(db: Queryable, asOf: Date | undefined, assetId: string | undefined) {
  const rows =
    asOf === undefined
      ? await db.query<TrialRow>(
          `select a.id as account_id, s.code as asset, s.scale, a.asset_id, a.marketplace_id, a.ref, a.code, a.normal_side,
              b.debits_posted::text as debits, b.credits_posted::text as credits
         from accounts a join account_balances b on b.account_id = a.id join assets s on s.id = a.asset_id
        where ($1::uuid is null or a.asset_id = $1)
        order by s.code, a.marketplace_id nulls first, a.ref`,
          [assetId ?? null],
        )
      : await db.query<TrialRow>(
          `select a.id as account_id, s.code as asset, s.scale, a.asset_id, a.marketplace_id, a.ref, a.code, a.normal_side,
              coalesce(t.debits, 0)::text as debits, coalesce(t.credits, 0)::text as credits
         from accounts a join assets s on s.id = a.asset_id
         left join (select e.account_id, sum(e.posted_amount) filter (where e.side = 'debit') as debits,
                           sum(e.posted_amount) filter (where e.side = 'credit') as credits
                      from entries e where e.effective_at <= $2 and ($1::uuid is null or e.asset_id = $1) group by e.account_id) t on t.account_id = a.id
        where ($1::uuid is null or a.asset_id = $1) and (a.created_at <= $2 or t.account_id is not null)
        order by s.code, a.marketplace_id nulls first, a.ref`,
          [assetId ?? null, asOf.toISOString()],
        );
  return rows;
}

/**
 * Every account's posted debits and credits over [from, to) of effective time, with its debits and
 * credits before `from` (the opening balance): the trial balance of a window. Accounts without an
 * entry before `to` are left out.
 */
export async function trialBalanceWindow(db: Queryable, from: Date, to: Date, assetId: string | undefined) {
  return db.query<TrialRow & { opening_debits: string; opening_credits: string }>(
    `select a.id as account_id, s.code as asset, s.scale, a.asset_id, a.marketplace_id, a.ref, a.code, a.normal_side,
            t.debits::text as debits, t.credits::text as credits, t.opening_debits::text as opening_debits, t.opening_credits::text as opening_credits
       from (select e.account_id,
                    coalesce(sum(e.posted_amount) filter (where e.side = 'debit' and e.effective_at >= $2), 0) as debits,
                    coalesce(sum(e.posted_amount) filter (where e.side = 'credit' and e.effective_at >= $2), 0) as credits,
                    coalesce(sum(e.posted_amount) filter (where e.side = 'debit' and e.effective_at < $2), 0) as opening_debits,
                    coalesce(sum(e.posted_amount) filter (where e.side = 'credit' and e.effective_at < $2), 0) as opening_credits
               from entries e where e.effective_at < $3 and e.posted_amount > 0 and ($1::uuid is null or e.asset_id = $1) group by e.account_id) t
       join accounts a on a.id = t.account_id join assets s on s.id = a.asset_id
      order by s.code, a.marketplace_id nulls first, a.ref`,
    [assetId ?? null, from.toISOString(), to.toISOString()],
  );
}

export type TrialRow = {
  account_id: string;
  asset: string;
  /** The asset's decimals, for display. */
  scale: number;
  asset_id: string;
  marketplace_id: string | null;
  ref: string;
  code: string;
  normal_side: "debit" | "credit";
  debits: string;
  credits: string;
};

export type Granularity = "day" | "month";

/** Fee revenue per party, marketplace, asset and day or month (in `timeZone`): credits less debits (reversals) of fee accounts. */
export async function feeRevenue(db: Queryable, w: ReportScope, granularity: Granularity) {
  return db.query<{ period: string; asset: string; scale: number; marketplace_id: string | null; party: string; revenue: string; entries: string }>(
    `select to_char(date_trunc($3, e.effective_at at time zone $5), $4) as period, s.code as asset, s.scale, a.marketplace_id,
            split_part(a.ref, ':', 1) as party,
            sum(case when e.side = 'credit' then e.posted_amount else -e.posted_amount end)::text as revenue, count(*)::text as entries
       from entries e join accounts a on a.id = e.account_id join assets s on s.id = e.asset_id
      where a.opened_by_service and a.ref like '%:fees' and e.effective_at >= $1 and e.effective_at < $2 and e.posted_amount > 0
        and ($6::text is null or a.marketplace_id = $6)
      group by 1, 2, 3, 4, 5
      order by 1, 2, 4 nulls first, 5`,
    [w.from.toISOString(), w.to.toISOString(), granularity, granularity === "day" ? "YYYY-MM-DD" : "YYYY-MM", w.timeZone, w.marketplaceId ?? null],
  );
}

/** What a report covers: [from, to) of effective time, of one marketplace or all, its days and months in `timeZone`. */
export interface ReportScope {
  from: Date;
  to: Date;
  timeZone: string;
  marketplaceId?: string;
}

/**
 * Each fee account's revenue over [from, to) with its opening (everything effective before `from`)
 * and closing (before `to`), summed per party, marketplace and asset: fee revenue earned to date,
 * as a balance.
 */
export async function feeRevenueBalances(db: Queryable, w: ReportScope) {
  return db.query<{ asset: string; scale: number; marketplace_id: string | null; party: string; opening: string; movements: string; closing: string }>(
    `select s.code as asset, s.scale, a.marketplace_id, split_part(a.ref, ':', 1) as party,
            coalesce(sum(v.amount) filter (where e.effective_at < $1), 0)::text as opening,
            coalesce(sum(v.amount) filter (where e.effective_at >= $1), 0)::text as movements,
            coalesce(sum(v.amount), 0)::text as closing
       from accounts a join assets s on s.id = a.asset_id
       join entries e on e.account_id = a.id and e.effective_at < $2 and e.posted_amount > 0
       cross join lateral (select case when e.side = 'credit' then e.posted_amount else -e.posted_amount end as amount) v
      where a.opened_by_service and a.ref like '%:fees' and ($3::text is null or a.marketplace_id = $3)
      group by 1, 2, 3, 4
      order by 1, 3 nulls first, 4`,
    [w.from.toISOString(), w.to.toISOString(), w.marketplaceId ?? null],
  );
}

/** Payouts confirmed in [from, to), with their chain transaction or external reference. */
export async function payoutsConfirmed(db: Queryable, from: Date, to: Date) {
  return db.query<{
    id: string;
    operator_id: string;
    asset: string;
    scale: number;
    amount: string;
    settlement: string;
    chain_id: string | null;
    to_address: string | null;
    tx_hash: string | null;
    block_number: string | null;
    log_index: number | null;
    external_reference: string | null;
    confirmed_at: Date | string;
  }>(
    `select p.id, p.operator_id, s.code as asset, s.scale, p.amount::text as amount, p.settlement, p.chain_id::text as chain_id, p.to_address, p.tx_hash,
            p.block_number::text as block_number, p.log_index, p.external_reference, p.confirmed_at
       from payouts p join assets s on s.id = p.asset_id
      where p.status = 'confirmed' and p.confirmed_at >= $1 and p.confirmed_at < $2
      order by p.confirmed_at, p.id
      limit 100001`,
    [from.toISOString(), to.toISOString()],
  );
}

/**
 * Every operator's payable per asset over [from, to) of effective time: opening balance (entries
 * effective before `from`), credits, debits, closing. A reversal is effective when what it reverses
 * was, so it lands in the same period.
 */
export async function operatorStatements(db: Queryable, from: Date, to: Date, assetId: string | undefined, operatorId?: string) {
  return db.query<{ operator_id: string; asset: string; scale: number; opening: string; credits: string; debits: string; closing: string; entries: string }>(
    `select a.owner_id as operator_id, s.code as asset, s.scale, o.opening::text as opening, coalesce(p.credits, 0)::text as credits, coalesce(p.debits, 0)::text as debits,
            (o.opening + coalesce(p.credits, 0) - coalesce(p.debits, 0))::text as closing, coalesce(p.n, 0)::text as entries
       from accounts a join assets s on s.id = a.asset_id
       cross join lateral (select coalesce(sum(case when e.side = 'credit' then e.posted_amount else -e.posted_amount end), 0) as opening
                             from entries e where e.account_id = a.id and e.effective_at < $1) o
       left join lateral (select sum(e.posted_amount) filter (where e.side = 'credit') as credits, sum(e.posted_amount) filter (where e.side = 'debit') as debits,
                                 count(*) filter (where e.posted_amount > 0) as n
                            from entries e where e.account_id = a.id and e.effective_at >= $1 and e.effective_at < $2) p on true
      where a.opened_by_service and a.marketplace_id is null and a.code = 'operator_payable' and ($3::uuid is null or a.asset_id = $3)
        and ($4::text is null or a.owner_id = $4)
      order by a.owner_id, s.code
      limit 100001`,
    [from.toISOString(), to.toISOString(), assetId ?? null, operatorId ?? null],
  );
}
