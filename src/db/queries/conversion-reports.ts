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
export async function conversionTotals(db: Queryable, f: { operatorId?: string; from: Date; to: Date; byOperator: boolean }): Promise<ConversionTotalsRow[]> {
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
  /** The account's balance and the money received that the amount was judged on: when neither changed, neither did the judgment. */
  state: string;
}

/**
 * Customers' money received in another asset than their marketplace's pricing currency since that
 * currency was set, and not yet converted: per customer account, the lower of its available
 * balance and that money (on-chain deposits and receipts from then on, less what was converted
 * out of the asset). Balances from before the pricing currency stay in their asset. A conversion
 * also keeps what the customer's usage used of its money (customerMoneyLeft), judged per account.
 * Of one account when `account` is given (under its lock, inside the conversion's transaction: only
 * that customer's rows are read); else a page of accounts after `afterAccountId`.
 */
export async function convertibleDeposits(
  db: Queryable,
  f: { limit: number; afterAccountId?: string; account?: { id: string; marketplaceId: string; customerId: string; assetId: string } },
): Promise<ConvertibleDepositRow[]> {
  const a = f.account;
  return db.query<ConvertibleDepositRow>(
    `with priced as (select id, pricing_asset_id, pricing_set_at from marketplaces where pricing_asset_id is not null and ($4::text is null or id = $4)),
     received as (
       select marketplace_id, customer_id, asset_id, sum(amount) as amt from (
         select d.marketplace_id, d.customer_id, d.asset_id, d.amount from chain_deposits d
           join priced p on p.id = d.marketplace_id join transfers t on t.id = d.transfer_id
          where t.created_at >= p.pricing_set_at and ($5::text is null or (d.customer_id = $5 and d.asset_id = $6))
         union all
         select r.marketplace_id, r.customer_id, r.asset_id, r.amount from funds_receipts r
           join priced p on p.id = r.marketplace_id
          where r.customer_id is not null and r.received_at >= p.pricing_set_at and ($5::text is null or (r.customer_id = $5 and r.asset_id = $6))
         union all
         select c.marketplace_id, c.customer_id, c.from_asset_id, -c.used from conversions c
           join priced p on p.id = c.marketplace_id
          where c.kind = 'deposit' and c.converted_at >= p.pricing_set_at and ($5::text is null or (c.customer_id = $5 and c.from_asset_id = $6))) x
       group by marketplace_id, customer_id, asset_id)
     select a.id as account_id, a.marketplace_id, a.owner_id as customer_id, c.billing, a.asset_id, m.pricing_asset_id,
            least(b.credits_posted - b.debits_posted - b.debits_pending, r.amt)::text as convertible,
            concat_ws(':', b.credits_posted, b.debits_posted, b.debits_pending, r.amt) as state
       from received r
       join priced m on m.id = r.marketplace_id and m.pricing_asset_id <> r.asset_id
       join customers c on c.marketplace_id = r.marketplace_id and c.id = r.customer_id
       join accounts a on a.marketplace_id = r.marketplace_id and a.asset_id = r.asset_id and a.owner_id = r.customer_id
                      and a.opened_by_service and a.code in ('customer_prepaid', 'customer_postpaid')
       join account_balances b on b.account_id = a.id
      where r.amt > 0 and b.credits_posted - b.debits_posted - b.debits_pending > 0
        and ($2::uuid is null or a.id > $2) and ($3::uuid is null or a.id = $3)
      order by a.id limit $1`,
    [f.limit, f.afterAccountId ?? null, a?.id ?? null, a?.marketplaceId ?? null, a?.customerId ?? null, a?.assetId ?? null],
  );
}

/** Serialises conversions of one customer account's money. */
export async function lockDepositConversions(tx: Queryable, accountId: string): Promise<void> {
  await tx.query("select pg_advisory_xact_lock(hashtextextended('deposit-conversion:' || $1, 0))", [accountId]);
}

/** What was converted out of a customer account so far (the key of its next conversion). */
export async function convertedOutOf(tx: Queryable, marketplaceId: string, customerId: string, assetId: string): Promise<bigint> {
  const [row] = await tx.query<{ used: string }>(
    "select coalesce(sum(used), 0)::text as used from conversions where kind = 'deposit' and marketplace_id = $1 and customer_id = $2 and from_asset_id = $3",
    [marketplaceId, customerId, assetId],
  );
  return BigInt(row!.used);
}

/** Codes of the assets earnings are priced in: marketplaces' pricing currencies and the earnings assets of conversions. */
export async function pricingAssetCodes(db: Queryable): Promise<Set<string>> {
  const rows = await db.query<{ code: string }>(
    `select a.code from assets a where a.id in (
       select pricing_asset_id from marketplaces where pricing_asset_id is not null
       union select from_asset_id from conversions where kind = 'payout'
       union select to_asset_id from conversions where kind = 'deposit')`,
  );
  return new Set(rows.map((r) => r.code));
}
