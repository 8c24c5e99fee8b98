import type { Queryable } from "../client.js";

/** Conversions and the platform's positions, summed for reports (docs/settlement.md, "Reports"). */

export interface ConversionTotalsRow {
  operator_id: string | null;
  from_asset: string;
  from_scale: number;
  to_asset: string;
  to_scale: number;
  conversions: string;
  part: string;
  used: string;
  remainder: string;
  to_amount: string;
  revaluation: string;
  feed: string;
  manual: string;
  first_at: Date | string;
  last_at: Date | string;
}

/** Per pair (and operator, when `byOperator`), what was converted in [from, to): of one operator when given. */
export async function conversionTotals(
  db: Queryable,
  f: { operatorId?: string; from: Date; to: Date; byOperator: boolean },
): Promise<ConversionTotalsRow[]> {
  const op = f.byOperator ? "c.operator_id" : "null::text";
  return db.query<ConversionTotalsRow>(
    `select ${op} as operator_id, fa.code as from_asset, fa.scale as from_scale, ta.code as to_asset, ta.scale as to_scale,
            count(*)::text as conversions, sum(c.part)::text as part, sum(c.used)::text as used, sum(c.remainder)::text as remainder,
            sum(c.to_amount)::text as to_amount, sum(c.revaluation)::text as revaluation,
            count(*) filter (where r.source = 'feed')::text as feed, count(*) filter (where r.source = 'manual')::text as manual,
            min(c.converted_at) as first_at, max(c.converted_at) as last_at
       from conversions c join assets fa on fa.id = c.from_asset_id join assets ta on ta.id = c.to_asset_id left join rates r on r.id = c.rate_id
      where c.converted_at >= $1 and c.converted_at < $2 and ($3::text is null or c.operator_id = $3)
      group by ${op}, fa.code, fa.scale, ta.code, ta.scale order by 1, 2, 4`,
    [f.from.toISOString(), f.to.toISOString(), f.operatorId ?? null],
  );
}

export interface PositionRow {
  asset: string;
  scale: number;
  ref: string;
  code: string;
  net: string;
}

/** The platform's conversion accounts and gains/losses accounts, with their posted balances (credits less debits). */
export async function conversionPositions(db: Queryable): Promise<PositionRow[]> {
  return db.query<PositionRow>(
    `select s.code as asset, s.scale, a.ref, a.code, (b.credits_posted - b.debits_posted)::text as net
       from accounts a join account_balances b on b.account_id = a.id join assets s on s.id = a.asset_id
      where a.marketplace_id is null and a.code in ('conversion', 'fx_gains_losses') and a.opened_by_service
      order by s.code, a.ref`,
  );
}

export interface ConvertibleDepositRow {
  account_id: string;
  marketplace_id: string;
  customer_id: string;
  billing: "prepaid" | "postpaid";
  asset_id: string;
  pricing_asset_id: string;
  convertible: string;
}

/**
 * Customers' money received in another asset than their marketplace's pricing currency and not yet
 * converted: per customer account, the lower of its available balance and its money received in
 * that asset (on-chain deposits, receipts) less what was converted out of it already.
 */
export async function convertibleDeposits(db: Queryable, limit: number): Promise<ConvertibleDepositRow[]> {
  return db.query<ConvertibleDepositRow>(
    `with received as (
       select marketplace_id, customer_id, asset_id, sum(amount) as amt from (
         select marketplace_id, customer_id, asset_id, amount from chain_deposits
         union all select marketplace_id, customer_id, asset_id, amount from funds_receipts where customer_id is not null
         union all select marketplace_id, customer_id, from_asset_id, -used from conversions where kind = 'deposit') x
       where marketplace_id in (select id from marketplaces where pricing_asset_id is not null)
       group by marketplace_id, customer_id, asset_id)
     select a.id as account_id, a.marketplace_id, a.owner_id as customer_id, c.billing, a.asset_id, m.pricing_asset_id,
            least(b.credits_posted - b.debits_posted - b.debits_pending, r.amt)::text as convertible
       from received r
       join marketplaces m on m.id = r.marketplace_id and m.pricing_asset_id is not null and m.pricing_asset_id <> r.asset_id
       join customers c on c.marketplace_id = r.marketplace_id and c.id = r.customer_id
       join accounts a on a.marketplace_id = r.marketplace_id and a.asset_id = r.asset_id and a.owner_id = r.customer_id
                      and a.opened_by_service and a.code in ('customer_prepaid', 'customer_postpaid')
       join account_balances b on b.account_id = a.id
      where r.amt > 0 and b.credits_posted - b.debits_posted - b.debits_pending > 0
      order by a.id limit $1`,
    [limit],
  );
}
