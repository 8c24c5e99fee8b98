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

/** Fee revenue per party, marketplace, asset and period: credits less debits (reversals) of fee accounts. */
export async function feeRevenue(db: Queryable, from: Date, to: Date, granularity: Granularity) {
  return db.query<{ period: string; asset: string; scale: number; marketplace_id: string | null; party: string; revenue: string; entries: string }>(
    `select to_char(date_trunc($3, e.effective_at at time zone 'UTC'), $4) as period, s.code as asset, s.scale, a.marketplace_id,
            split_part(a.ref, ':', 1) as party,
            sum(case when e.side = 'credit' then e.posted_amount else -e.posted_amount end)::text as revenue, count(*)::text as entries
       from entries e join accounts a on a.id = e.account_id join assets s on s.id = e.asset_id
      where a.opened_by_service and a.ref like '%:fees' and e.effective_at >= $1 and e.effective_at < $2 and e.posted_amount > 0
      group by 1, 2, 3, 4, 5
      order by 1, 2, 4 nulls first, 5`,
    [from.toISOString(), to.toISOString(), granularity, granularity === "day" ? "YYYY-MM-DD" : "YYYY-MM"],
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
export async function operatorStatements(db: Queryable, from: Date, to: Date, assetId: string | undefined) {
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
      order by a.owner_id, s.code
      limit 100001`,
    [from.toISOString(), to.toISOString(), assetId ?? null],
  );
}
