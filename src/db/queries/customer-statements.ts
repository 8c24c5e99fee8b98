import type { Database, Queryable } from "../client.js";

/**
 * A customer's statement and balances (GET /v1/customers/{id}/statement and /balance). The
 * customer's money is what its accounts of the service hold: its balance in each asset
 * (`customer:{id}`) and its holds' escrow accounts (`hold:{id}`, money reserved for running jobs),
 * so that usage charged to a hold is on the statement like any other usage, and moving money
 * between the balance and a hold (opening or closing it) moves none in or out.
 *
 * Parameters of every statement below: $1 marketplace, $2 customer, $3 from, $4 to.
 */
const ACCOUNTS = `select a.id, a.asset_id, a.code from accounts a
   where a.opened_by_service and a.marketplace_id = $1 and a.owner_type = 'customer' and a.owner_id = $2
     and a.code in ('customer_prepaid', 'customer_postpaid', 'customer_hold')`;

const SIGNED = "case when e.side = 'credit' then e.posted_amount else -e.posted_amount end";

/**
 * One line per transfer and asset that moved the customer's money, effective in [from, to), with
 * what it was. What it was is read from the service's own tables (the usage record, the chain
 * deposit, the receipt, the marketplace's clearing account on the other side), never from metadata
 * a tenant could have written.
 */
const LINES = `acct as (${ACCOUNTS}),
  moved as (select e.transfer_id, e.asset_id, sum(${SIGNED}) as amount
              from entries e join acct on acct.id = e.account_id
             where e.effective_at >= $3 and e.effective_at < $4 and e.posted_amount > 0
             group by e.transfer_id, e.asset_id
            having sum(${SIGNED}) <> 0),
  rec as (select u.* from usage_records u where u.marketplace_id = $1 and u.customer_id = $2 and u.effective_at >= $3 and u.effective_at < $4),
  -- What each line is; whether its money came from the marketplace's clearing account is asked
  -- only of the lines nothing else explained (most are usage).
  known as (
    select m.transfer_id, m.asset_id, m.amount, t.seq, t.effective_at, t.created_at, t.kind as transfer_kind, t.reverses_id,
           t.metadata, u.id as usage_id, r.id as refund_of, cd.tx_hash, fr.reference as receipt_reference,
           coalesce(u.id, r.id) as record_id, coalesce(u.external_id, r.external_id) as external_id, coalesce(u.resource, r.resource) as resource,
           coalesce(u.unit, r.unit) as unit, coalesce(u.quantity, r.quantity)::text as quantity,
           coalesce(u.unit_price, r.unit_price)::text as unit_price, coalesce(u.gross, r.gross)::text as gross,
           case when u.id is not null or r.id is not null or cd.transfer_id is not null or fr.id is not null then false
                else exists (select 1 from entries x join accounts c on c.id = x.account_id
                              where x.transfer_id = t.id and x.side = 'debit' and c.opened_by_service
                                and c.marketplace_id = $1 and c.code = 'deposit_clearing') end as from_clearing
      from moved m join transfers t on t.id = m.transfer_id
      left join rec u on u.transfer_id = t.id
      -- The reversed record, found by the id its reversal names and proven by the transfer it
      -- reversed (the reversal may be effective in a later period than the record, once closed
      -- periods take their corrections in the current one).
      left join usage_records r
             on t.kind = 'reversal' and r.marketplace_id = $1 and r.customer_id = $2 and r.transfer_id = t.reverses_id
            and r.id = case when t.metadata #>> '{usage_reversal,usage_id}' ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
                            then (t.metadata #>> '{usage_reversal,usage_id}')::uuid end
      left join chain_deposits cd on cd.transfer_id = t.id and cd.marketplace_id = $1 and cd.customer_id = $2
      left join funds_receipts fr on fr.transfer_id = t.id and fr.marketplace_id = $1 and fr.customer_id = $2),
  lines as (
    select k.transfer_id, k.asset_id, k.amount, k.seq, k.effective_at, k.created_at, k.transfer_kind, k.reverses_id,
           case when k.usage_id is not null then 'usage' when k.refund_of is not null then 'refund'
                when k.tx_hash is not null or k.receipt_reference is not null or k.from_clearing then 'deposit' else 'other' end as type,
           case when k.usage_id is not null or k.refund_of is not null then null when k.tx_hash is not null then 'chain'
                when k.receipt_reference is not null then 'receipt' when k.from_clearing then 'marketplace' end as deposit_source,
           coalesce(k.tx_hash, k.receipt_reference) as reference,
           k.metadata #>> '{usage_reversal,reason}' as reason,
           k.metadata #>> '{conversion,from}' as conversion_from, k.metadata #>> '{conversion,to}' as conversion_to,
           k.record_id as usage_id, k.external_id, k.resource, k.unit, k.quantity, k.unit_price, k.gross
      from known k)`;

/**
 * Runs fn's reads in one snapshot (a read-only REPEATABLE READ transaction), so that a statement's
 * sums and its lines agree even while money moves.
 */
export function inOneSnapshot<T>(db: Database, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.query("set transaction isolation level repeatable read, read only");
    return fn(tx);
  });
}

/** A line of a customer's statement (customerStatementLines). */
export interface CustomerStatementRow {
  transfer_id: string;
  /** The transfer's position in recording order: the tie-breaker of the statement's order, and its cursor. */
  seq: string;
  asset_id: string;
  asset_code: string;
  scale: number;
  /** Signed: + to the customer, − from it. */
  amount: string;
  effective_at: Date | string;
  created_at: Date | string;
  transfer_kind: string;
  reverses_id: string | null;
  type: "deposit" | "usage" | "refund" | "other";
  deposit_source: "chain" | "receipt" | "marketplace" | null;
  reference: string | null;
  reason: string | null;
  conversion_from: string | null;
  conversion_to: string | null;
  usage_id: string | null;
  external_id: string | null;
  resource: string | null;
  unit: string | null;
  quantity: string | null;
  unit_price: string | null;
  gross: string | null;
}

/**
 * The statement's lines in its order (asset code, effective time, recording order), after the line
 * of transfer `after.seq` in asset `after.assetId` (a page's cursor), at most `limit`.
 */
export async function customerStatementLines(
  db: Queryable,
  customer: { marketplaceId: string; id: string },
  period: { from: Date; to: Date },
  options: { after?: { seq: string; assetId: string }; limit: number },
): Promise<CustomerStatementRow[]> {
  return db.query<CustomerStatementRow>(
    `with ${LINES},
          pos as (select s.code, t.effective_at, t.seq from transfers t join assets s on s.id = $6::uuid where t.seq = $5::bigint)
     select l.transfer_id, l.seq::text as seq, l.asset_id, s.code as asset_code, s.scale, l.amount::text as amount, l.effective_at, l.created_at,
            l.transfer_kind, l.reverses_id, l.type, l.deposit_source, l.reference, l.reason, l.conversion_from, l.conversion_to,
            l.usage_id, l.external_id, l.resource, l.unit, l.quantity, l.unit_price, l.gross
       from lines l join assets s on s.id = l.asset_id left join pos on true
      where pos.seq is null or (s.code, l.effective_at, l.seq) > (pos.code, pos.effective_at, pos.seq)
      order by s.code, l.effective_at, l.seq
      limit $7`,
    [
      customer.marketplaceId,
      customer.id,
      period.from.toISOString(),
      period.to.toISOString(),
      options.after?.seq ?? null,
      options.after?.assetId ?? null,
      options.limit,
    ],
  );
}

/** Whether transfer `seq` moved the customer's money in the asset: a cursor of its statement. */
export async function isCustomerStatementLine(db: Queryable, customer: { marketplaceId: string; id: string }, seq: string, assetId: string): Promise<boolean> {
  const rows = await db.query<{ yes: boolean }>(
    `with acct as (${ACCOUNTS})
     select true as yes from transfers t join entries e on e.transfer_id = t.id join acct on acct.id = e.account_id
      where t.seq = $3::bigint and e.asset_id = $4::uuid limit 1`,
    [customer.marketplaceId, customer.id, seq, assetId],
  );
  return rows.length > 0;
}

/** Per asset, a customer's statement in sums: what the lines add up to, by type. */
export interface CustomerStatementTotalsRow {
  asset_id: string;
  asset_code: string;
  scale: number;
  opening: string;
  deposits: string;
  usage: string;
  refunds: string;
  other: string;
  closing: string;
  /** The part of the closing balance in the customer's holds. */
  closing_held: string;
  lines: string;
}

/**
 * Per asset the customer has an account in: the opening balance (entries effective before `from`),
 * the sums of the period's lines by type, and the closing balance, summed from the entries
 * effective before `to` on their own (not from the lines), so that opening + lines = closing is a
 * check of the lines. Assets with nothing to show (zero balances, no line) are left out.
 */
export async function customerStatementTotals(
  db: Queryable,
  customer: { marketplaceId: string; id: string },
  period: { from: Date; to: Date },
): Promise<CustomerStatementTotalsRow[]> {
  return db.query<CustomerStatementTotalsRow>(
    `with ${LINES},
          sums as (select asset_id, sum(amount) filter (where type = 'deposit') as deposits, sum(amount) filter (where type = 'usage') as usage,
                          sum(amount) filter (where type = 'refund') as refunds, sum(amount) filter (where type = 'other') as other, count(*) as n
                     from lines group by asset_id),
          bal as (select acct.asset_id, coalesce(sum(${SIGNED}) filter (where e.effective_at < $3), 0) as opening,
                         coalesce(sum(${SIGNED}), 0) as closing, coalesce(sum(${SIGNED}) filter (where acct.code = 'customer_hold'), 0) as closing_held
                    from acct left join entries e on e.account_id = acct.id and e.effective_at < $4
                   group by acct.asset_id)
     select b.asset_id, s.code as asset_code, s.scale, b.opening::text as opening, coalesce(x.deposits, 0)::text as deposits,
            coalesce(x.usage, 0)::text as usage, coalesce(x.refunds, 0)::text as refunds, coalesce(x.other, 0)::text as other,
            b.closing::text as closing, b.closing_held::text as closing_held, coalesce(x.n, 0)::text as lines
       from bal b join assets s on s.id = b.asset_id left join sums x on x.asset_id = b.asset_id
      where b.opening <> 0 or b.closing <> 0 or x.n > 0
      order by s.code`,
    [customer.marketplaceId, customer.id, period.from.toISOString(), period.to.toISOString()],
  );
}

/** A customer's balances now in one asset (customerBalances). */
export interface CustomerBalanceRow {
  asset_id: string;
  asset_code: string;
  scale: number;
  /** Its balance account in the asset (null if only holds were ever opened in it, which cannot happen today). */
  account_id: string | null;
  posted: string;
  /** posted less the pending debits of its balance account. */
  available: string;
  held: string;
  overdraft_limit: string;
}

/** Per asset, the customer's balance account's posted and available balances, what its holds' escrow accounts hold, and its overdraft limit (postpaid). */
export async function customerBalances(db: Queryable, customer: { marketplaceId: string; id: string }): Promise<CustomerBalanceRow[]> {
  return db.query<CustomerBalanceRow>(
    `with acct as (${ACCOUNTS})
     select acct.asset_id, s.code as asset_code, s.scale,
            max(acct.id::text) filter (where acct.code <> 'customer_hold') as account_id,
            coalesce(sum(b.credits_posted - b.debits_posted) filter (where acct.code <> 'customer_hold'), 0)::text as posted,
            coalesce(sum(b.credits_posted - b.debits_posted - b.debits_pending) filter (where acct.code <> 'customer_hold'), 0)::text as available,
            coalesce(sum(b.credits_posted - b.debits_posted) filter (where acct.code = 'customer_hold'), 0)::text as held,
            coalesce(max(b.overdraft_limit) filter (where acct.code <> 'customer_hold'), 0)::text as overdraft_limit
       from acct join account_balances b on b.account_id = acct.id join assets s on s.id = acct.asset_id
      group by acct.asset_id, s.code, s.scale
      order by s.code`,
    [customer.marketplaceId, customer.id],
  );
}
