import type { Queryable } from "../client.js";
import { pgArray } from "../sql-arrays.js";

/**
 * The money behind usage (src/services/funding.ts, docs/ledger.md "Funded earnings"): what each
 * marketplace's customers and the marketplace itself paid, its credit limit, what its usage needs,
 * and the advisory locks that funding is judged under.
 */

/**
 * SQL for a marketplace's money in an asset, given the SQL of the marketplace id and the asset id
 * (parameters, or columns of a query over many marketplaces): what it settled (receipts without a
 * customer), the credit limit the platform grants it, and what its customers converted out of the asset.
 */
export const poolSql = {
  settled: (m: string, a: string) =>
    `(select coalesce(sum(amount), 0) from funds_receipts where marketplace_id = ${m} and asset_id = ${a} and customer_id is null)`,
  creditLimit: (m: string, a: string) => `coalesce((select credit_limit from marketplace_credit_limits where marketplace_id = ${m} and asset_id = ${a}), 0)`,
  convertedOut: (m: string, a: string) =>
    `(select coalesce(sum(used), 0) from conversions where kind = 'deposit' and marketplace_id = ${m} and from_asset_id = ${a})`,
};

/** What a marketplace settled (receipts without a customer) and the credit limit the platform grants it, in an asset. */
export async function marketplacePoolTotals(db: Queryable, marketplaceId: string, assetId: string): Promise<{ settled: bigint; creditLimit: bigint }> {
  const [row] = await db.query<{ settled: string; credit_limit: string }>(
    `select ${poolSql.settled("$1", "$2")}::text as settled, ${poolSql.creditLimit("$1", "$2")}::text as credit_limit`,
    [marketplaceId, assetId],
  );
  return { settled: BigInt(row!.settled), creditLimit: BigInt(row!.credit_limit) };
}

/**
 * Each customer's own money received: on-chain deposits and receipts recorded for it, and money
 * received in another asset converted into this one (less what was converted out of this one).
 */
const CUSTOMER_CASH = `
  select customer_id, sum(amount) as amt from (
    select customer_id, amount from chain_deposits where marketplace_id = $1 and asset_id = $2
    union all
    select customer_id, amount from funds_receipts where marketplace_id = $1 and asset_id = $2 and customer_id is not null
    union all
    select customer_id, to_amount from conversions where kind = 'deposit' and marketplace_id = $1 and to_asset_id = $2
    union all
    select customer_id, -used from conversions where kind = 'deposit' and marketplace_id = $1 and from_asset_id = $2) x
  group by customer_id`;

/**
 * What is left of one customer's own money in an asset once its usage in that asset is paid: its
 * money received (CUSTOMER_CASH) less the gross of its usage records in the asset not reversed.
 * The funding judgment spends a customer's own money on its usage first, so only this much can
 * leave the asset without leaving some of that usage (and earnings maybe already paid out of it)
 * unfunded. Negative when the usage needs more than it received. Reads the marketplace's usage
 * records of the asset (no index by customer): for the worker, under the marketplace's funding
 * lock (deposit conversions), not for a request.
 */
export async function customerMoneyLeft(tx: Queryable, marketplaceId: string, customerId: string, assetId: string): Promise<bigint> {
  const [row] = await tx.query<{ left: string }>(
    `with cash as (${CUSTOMER_CASH})
     select (coalesce((select amt from cash where customer_id = $3), 0)
           - (select coalesce(sum(u.gross), 0) from usage_records u
               where u.marketplace_id = $1 and u.asset_id = $2 and u.customer_id = $3
                 and not exists (select 1 from transfers r where r.reverses_id = u.transfer_id)))::text as left`,
    [marketplaceId, assetId, customerId],
  );
  return BigInt(row!.left);
}

/**
 * The sum over the marketplace's customer accounts of their debits (usage and holds, whatever was
 * reversed since) beyond their money received.
 */
export async function customersNeedBeyondCash(db: Queryable, marketplaceId: string, assetId: string): Promise<bigint> {
  const [row] = await db.query<{ need: string }>(
    `with cash as (${CUSTOMER_CASH})
     select coalesce(sum(greatest(0, b.debits_posted - coalesce(c.amt, 0))), 0)::text as need
       from accounts a join account_balances b on b.account_id = a.id left join cash c on c.customer_id = a.owner_id
      where a.marketplace_id = $1 and a.asset_id = $2 and a.opened_by_service and a.code in ('customer_prepaid', 'customer_postpaid')`,
    [marketplaceId, assetId],
  );
  return BigInt(row!.need);
}

/**
 * An upper bound of customersNeedBeyondCash read from one row and the marketplace's conversions out
 * of the asset: the sum of the debits posted to the marketplace's customer accounts
 * (customer_debit_totals, kept by a trigger on account_balances) plus what was converted out of
 * the asset. A customer has one account per asset (its billing is fixed), and its money received
 * is what came in (deposits, receipts, conversions into the asset: amounts that are never
 * negative) less what was converted out (`used`, never negative), so `debits − received` is at
 * most `debits + converted out` for every account, and the sum at most the sum of both. null when
 * the row is missing or negative (its customers have no debits yet, or it is not what the trigger
 * keeps): then only the full sum bounds it.
 */
export async function customersDebitsBound(db: Queryable, marketplaceId: string, assetId: string): Promise<bigint | null> {
  const [row] = await db.query<{ debits: string | null; converted_out: string }>(
    `select (select debits_posted from customer_debit_totals where marketplace_id = $1 and asset_id = $2)::text as debits,
            ${poolSql.convertedOut("$1", "$2")}::text as converted_out`,
    [marketplaceId, assetId],
  );
  if (row!.debits === null) return null;
  const debits = BigInt(row!.debits);
  return debits < 0n ? null : debits + BigInt(row!.converted_out);
}

export type UnfundedRow = { operator_id: string; gross: string; net: string; disputed_net: string };

/**
 * Where a walk over a marketplace's usage in an asset may start ($1 marketplace, $2 asset, $3 what
 * its pool holds, $4 records to leave out or null; docs/ledger.md "The funding mark").
 *
 * `pre`: for each customer, the gross of its records up to the marketplace's funding mark that
 * still count (the mark's sum, less those reversed or left out). Its own money funds them first,
 * oldest first, so what they take from the pool is `greatest(0, g − money)`; all of the mark's
 * records are funded exactly when the sum of that over the customers (`used`) is at most what the
 * pool holds. Then the walk after the mark, with each customer's money less `pre.g` and the pool
 * less `used`, is the walk over all the records cut where the mark is: the same records, the same
 * amounts. Otherwise (money went down since the mark was made) `start` is 0: every record.
 */
const MARK_START = `
  cash as (${"${CUSTOMER_CASH}"}),
  mark as (select funding_seq as w from usage_funding_marks where marketplace_id = $1 and asset_id = $2),
  pre as (
    select customer_id, sum(g) as g from (
      select customer_id, gross as g from usage_funding_mark_customers where marketplace_id = $1 and asset_id = $2
      union all
      -- Reversals, found from the reversing transfers (few), never from the marketplace's records (many).
      select u.customer_id, -u.gross
        from transfers t cross join lateral (
          select u.customer_id, u.gross from usage_records u
           where u.transfer_id = t.reverses_id and u.marketplace_id = $1 and u.asset_id = $2 and u.funding_seq <= (select w from mark)) u
       where t.reverses_id is not null
      union all
      select u.customer_id, -u.gross from usage_records u
       where $4::uuid[] is not null and u.id = any($4::uuid[]) and u.marketplace_id = $1 and u.asset_id = $2
         and u.funding_seq <= (select w from mark) and not exists (select 1 from transfers t where t.reverses_id = u.transfer_id)) x
    group by customer_id),
  start as (
    select coalesce(max(m.w), 0) as w, coalesce(max(q.rest), 0) as used
      from mark m cross join (select coalesce(sum(greatest(0, p.g - greatest(0, coalesce(c.amt, 0)))), 0) as rest
                                from pre p left join cash c on c.customer_id = p.customer_id) q
     where q.rest <= $3::numeric)`.replace("${CUSTOMER_CASH}", CUSTOMER_CASH);

/**
 * The walk over the marketplace's usage after `$5` (a start from MARK_START, or 0), in funding
 * order, with `$6` of the pool already used before it; ending in the CTE `unfunded` (each record's
 * unfunded gross, with its operator, net and whether it is disputed). The start is a value, not a
 * subquery, so that the plan finds the records after it by funding_seq (its BRIN index) instead
 * of reading all of the marketplace's records.
 */
const FUNDING_WALK = `
  with ${"${MARK_START}"},
  -- Each customer's money left at the start, as one object looked up by key for each record: a
  -- join here could be planned as a loop over every customer for every record.
  base as (
    select coalesce(jsonb_object_agg(customer_id, left0), '{}') as j
      from (select coalesce(c.customer_id, p.customer_id) as customer_id,
                   coalesce(c.amt, 0) - coalesce(p.g, 0) as left0
              from cash c full join (select customer_id, g from pre where $5::bigint > 0) p on p.customer_id = c.customer_id) x),
  r as (
    select u.funding_seq, u.operator_id, u.gross, u.net,
           exists (select 1 from dispute_items di where di.usage_id = u.id and di.open) as disputed,
           coalesce(((select j from base) ->> u.customer_id)::numeric, 0)
             - (sum(u.gross) over (partition by u.customer_id order by u.funding_seq) - u.gross) as cash_left
      from usage_records u
     where u.marketplace_id = $1 and u.asset_id = $2 and u.funding_seq > $5::bigint
       and not exists (select 1 from transfers t where t.reverses_id = u.transfer_id) and ($4::uuid[] is null or u.id <> all($4::uuid[]))),
  rest as (select funding_seq, operator_id, gross, net, disputed, gross - greatest(0, least(gross, cash_left)) as rest from r),
  pooled as (
    select funding_seq, operator_id, gross, net, disputed, rest,
           $3::numeric - $6::numeric - (sum(rest) over (order by funding_seq) - rest) as pool_left
      from rest where rest > 0),
  unfunded as (select funding_seq, operator_id, gross, net, disputed, rest - greatest(0, least(rest, pool_left)) as unfunded from pooled)`.replace(
  "${MARK_START}",
  MARK_START,
);

type WalkStart = { w: string; used: string };
type Params = [string, string, string, string | null];

/** Where the walk starts (MARK_START): after the mark when the money funds every record up to it, else at the first record. */
async function walkStart(db: Queryable, params: Params): Promise<WalkStart> {
  const [row] = await db.query<WalkStart>(`with ${MARK_START} select w::text as w, used::text as used from start`, params, { unnamed: true });
  return row ?? { w: "0", used: "0" };
}

/**
 * Runs a walk (`select`: the statement after FUNDING_WALK's CTEs, one row) from the start read
 * first. The walk's statement reads the start again in its own snapshot: when money or reversals
 * changed in between, it runs again from the new start (from the first record after three tries,
 * which needs no start).
 */
async function walkFromStart<T>(db: Queryable, params: Params, select: string, extra: unknown[], useMark: boolean): Promise<{ row: T; w: bigint }> {
  let start = useMark ? await walkStart(db, params) : { w: "0", used: "0" };
  for (let attempt = 0; ; attempt++) {
    const seenStart =
      start.w === "0"
        ? "'0' as start_w, '0' as start_used"
        : "coalesce((select w from start), 0)::text as start_w, coalesce((select used from start), 0)::text as start_used";
    const [row] = await db.query<T & { start_w: string; start_used: string }>(
      `${FUNDING_WALK}, walk as (${select})
       select walk.*, ${seenStart} from walk`,
      [...params, start.w, start.used, ...extra],
      // A walk over the marketplace's usage, whose best plan depends on the marketplace and the
      // start: planned at each run with its values, also on the read pool (generic plans there).
      { unnamed: true },
    );
    const seen = { w: row!.start_w, used: row!.start_used };
    if (start.w === "0" || (seen.w === start.w && seen.used === start.used)) return { row: row!, w: BigInt(start.w) };
    start = attempt < 2 ? seen : { w: "0", used: "0" };
  }
}

/**
 * Per operator (all, or only `operatorId`), the gross and the operator's net of the marketplace's
 * usage (not reversed, without `withoutUsageIds`) that its customers' money and then `available` of
 * the pool leave unfunded, first come first funded; and of that net, the part of records in an open
 * dispute (`disputed_net`), which the dispute holds as well. With `useMark` (a judgment shown,
 * not acted on), walks the records after the funding mark when the money funds every record up to
 * it (MARK_START); money moved is judged on every record, whatever the mark's rows say.
 */
export async function unfundedUsageByOperator(
  db: Queryable,
  q: { marketplaceId: string; assetId: string; available: bigint; operatorId: string | null; withoutUsageIds: string[] | null; useMark: boolean },
): Promise<UnfundedRow[]> {
  const params: Params = [q.marketplaceId, q.assetId, q.available.toString(), q.withoutUsageIds === null ? null : pgArray(q.withoutUsageIds)];
  const { row } = await walkFromStart<{ rows: UnfundedRow[] }>(
    db,
    params,
    `select coalesce(json_agg(o order by o.operator_id), '[]') as rows from (
       select operator_id, sum(unfunded)::text as gross, sum(net_unfunded)::text as net,
              sum(case when disputed then net_unfunded else 0 end)::text as disputed_net
         from (select operator_id, unfunded, disputed, net - div(net * (gross - unfunded), gross) as net_unfunded from unfunded where unfunded > 0) per_record
        where ($7::text is null or operator_id = $7)
        group by operator_id) o`,
    [q.operatorId],
    q.useMark,
  );
  return row.rows;
}

/**
 * The first record (its funding_seq) that the money leaves unfunded, or null when all are funded;
 * and the mark the walk started after (0: every record was walked). For the mark step.
 */
export async function firstUnfundedRecord(
  db: Queryable,
  marketplaceId: string,
  assetId: string,
  available: bigint,
): Promise<{ first: bigint | null; walkedAfter: bigint }> {
  const { row, w } = await walkFromStart<{ first: string | null }>(
    db,
    [marketplaceId, assetId, available.toString(), null],
    "select min(funding_seq)::text as first from unfunded where unfunded > 0",
    [],
    true,
  );
  return { first: row.first === null ? null : BigInt(row.first), walkedAfter: w };
}

/**
 * Of one operator's records in the marketplace and asset: those the money leaves (partly) unfunded,
 * by funding_seq, with the part of their net that is unfunded. Each customer's own money funds its
 * records wherever they are in the order, so a record after an unfunded one may be funded: judged
 * record by record. With `useMark`, the walk starts after the funding mark when the money funds
 * every record up to it (MARK_START): the records before it are all funded, so the answer is the
 * same as a walk over all of them.
 */
export async function unfundedNetsOfOperator(
  db: Queryable,
  marketplaceId: string,
  assetId: string,
  available: bigint,
  operatorId: string,
  useMark: boolean,
): Promise<Map<bigint, bigint>> {
  const { row } = await walkFromStart<{ rows: { seq: string; net: string }[] }>(
    db,
    [marketplaceId, assetId, available.toString(), null],
    `select coalesce(json_agg(json_build_object('seq', funding_seq::text, 'net', (net - div(net * (gross - unfunded), gross))::text)), '[]') as rows
       from unfunded where unfunded > 0 and operator_id = $7`,
    [operatorId],
    useMark,
  );
  return new Map(row.rows.map((r) => [BigInt(r.seq), BigInt(r.net)]));
}

export type MarketplaceFundingTotalsRow = { received: string; usage: string; clearing: string };

/**
 * A marketplace's totals in an asset: its customers' money received, the gross of its usage not
 * reversed, and what its deposit clearing account holds (deposits it claimed, less its settlements).
 */
export async function marketplaceFundingTotals(db: Queryable, marketplaceId: string, assetId: string): Promise<MarketplaceFundingTotalsRow | undefined> {
  const [row] = await db.query<MarketplaceFundingTotalsRow>(
    `select (select coalesce(sum(amt), 0) from (${CUSTOMER_CASH}) c)::text as received,
            (select coalesce(sum(u.gross), 0) from usage_records u where u.marketplace_id = $1 and u.asset_id = $2
                and not exists (select 1 from transfers t where t.reverses_id = u.transfer_id))::text as usage,
            coalesce((select b.debits_posted - b.credits_posted from accounts a join account_balances b on b.account_id = a.id
                       where a.marketplace_id = $1 and a.asset_id = $2 and a.opened_by_service and a.ref = 'deposits:clearing'), 0)::text as clearing`,
    [marketplaceId, assetId],
  );
  return row;
}

export type OperatorPayableRow = { owner_id: string; asset_id: string; available: string };

/**
 * The payable accounts (and their available balances) of operators that have a payout not failed:
 * all of them, or those in one asset selling through one marketplace.
 */
export async function payablesOfPaidOperators(db: Queryable, scope: { marketplaceId: string; assetId: string } | null): Promise<OperatorPayableRow[]> {
  return db.query<OperatorPayableRow>(
    `
    select a.owner_id, a.asset_id, (b.credits_posted - b.debits_posted - b.debits_pending)::text as available
      from accounts a join account_balances b on b.account_id = a.id
     where a.opened_by_service and a.marketplace_id is null and a.code = 'operator_payable'
       and ($1::uuid is null or a.asset_id = $1)
       and ($2::text is null or exists (select 1 from marketplace_operators r where r.marketplace_id = $2 and r.operator_id = a.owner_id))
       and exists (select 1 from payouts p where p.operator_id = a.owner_id and p.asset_id = a.asset_id and p.status <> 'failed')
     order by a.owner_id, a.asset_id`,
    [scope?.assetId ?? null, scope?.marketplaceId ?? null],
  );
}

/** Sets (or replaces) a marketplace's credit limit in an asset, naming the proposal that decided it. */
export async function upsertMarketplaceCreditLimit(
  tx: Queryable,
  l: { marketplaceId: string; assetId: string; creditLimit: string; proposalId: string; updatedAt: Date },
): Promise<void> {
  await tx.query(
    `insert into marketplace_credit_limits (marketplace_id, asset_id, credit_limit, proposal_id, updated_at) values ($1, $2, $3, $4, $5)
           on conflict (marketplace_id, asset_id) do update set credit_limit = excluded.credit_limit, proposal_id = excluded.proposal_id, updated_at = excluded.updated_at`,
    [l.marketplaceId, l.assetId, l.creditLimit, l.proposalId, l.updatedAt.toISOString()],
  );
}

/** Records money received (for a customer, or a marketplace's settlement when `customerId` is null), with its transfer. */
export async function insertFundsReceipt(
  tx: Queryable,
  r: {
    id: string;
    marketplaceId: string;
    customerId: string | null;
    assetId: string;
    amount: bigint;
    reference: string;
    referenceKey: string;
    transferId: string;
    proposalId: string;
    receivedAt: Date;
  },
): Promise<void> {
  await tx.query(
    `insert into funds_receipts (id, marketplace_id, customer_id, asset_id, amount, reference, reference_key, transfer_id, proposal_id, received_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [r.id, r.marketplaceId, r.customerId, r.assetId, r.amount.toString(), r.reference, r.referenceKey, r.transferId, r.proposalId, r.receivedAt.toISOString()],
  );
}

// The funding locks (see lockOperatorFunds in src/services/funding.ts).

/** The lock under which an operator's payable-now in an asset is judged and taken. */
export async function lockOperatorPayoutFunds(tx: Queryable, operatorId: string, assetId: string): Promise<void> {
  await tx.query("select pg_advisory_xact_lock(hashtextextended($1, 0))", [`payout-funds:${operatorId}:${assetId}`]);
}

/** The funding lock of every marketplace the operator sells through, exclusive, in marketplace id order. */
export async function lockFundingOfOperatorMarketplaces(tx: Queryable, operatorId: string): Promise<void> {
  await tx.query(
    `select pg_advisory_xact_lock(hashtextextended('usage-funding:' || marketplace_id, 0))
       from (select marketplace_id from marketplace_operators where operator_id = $1 order by marketplace_id) m`,
    [operatorId],
  );
}

/** The same for several operators at once: every marketplace any of them sells through, exclusive, each once, in marketplace id order. */
export async function lockFundingOfOperatorsMarketplaces(tx: Queryable, operatorIds: string[]): Promise<void> {
  await tx.query(
    `select pg_advisory_xact_lock(hashtextextended('usage-funding:' || marketplace_id, 0))
       from (select distinct marketplace_id from marketplace_operators where operator_id = any($1::text[]) order by marketplace_id) m`,
    [pgArray(operatorIds)],
  );
}

/** Marketplaces' funding locks in shared mode (usage being written): one statement, each once, in marketplace id order. */
export async function lockMarketplacesFundingShared(tx: Queryable, marketplaceIds: string[]): Promise<void> {
  if (marketplaceIds.length === 0) return;
  await tx.query(
    `select pg_advisory_xact_lock_shared(hashtextextended('usage-funding:' || m.id, 0))
       from (select distinct id from unnest($1::text[]) as u(id) order by id) m`,
    [pgArray(marketplaceIds)],
  );
}

/** A marketplace's funding lock in exclusive mode: no usage written, no payout judged meanwhile. */
export async function lockMarketplaceFundingExclusive(tx: Queryable, marketplaceId: string): Promise<void> {
  await tx.query("select pg_advisory_xact_lock(hashtextextended($1, 0))", [fundingLockKey(marketplaceId)]);
}

/** The same, only if nobody holds it now (usage being written holds it shared): true when taken. */
export async function tryLockMarketplaceFundingExclusive(tx: Queryable, marketplaceId: string): Promise<boolean> {
  const [row] = await tx.query<{ got: boolean }>("select pg_try_advisory_xact_lock(hashtextextended($1, 0)) as got", [fundingLockKey(marketplaceId)]);
  return row!.got;
}

/** The key (hashed) of a marketplace's funding lock. */
export const fundingLockKey = (marketplaceId: string) => `usage-funding:${marketplaceId}`;
