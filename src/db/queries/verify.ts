import type { Queryable } from "../client.js";

// The ledger's invariants (docs/ledger.md), each as a query of the rows that break it (read-only).

/** Assets whose debits and credits, posted or pending, do not sum to the same total. */
export async function findUnbalancedAssets(db: Queryable) {
  return db.query<{ code: string; posted_diff: string; pending_diff: string }>(`
    select s.code, sum(b.debits_posted - b.credits_posted)::text as posted_diff, sum(b.debits_pending - b.credits_pending)::text as pending_diff
      from account_balances b join accounts a on a.id = b.account_id join assets s on s.id = a.asset_id
     group by s.code
    having sum(b.debits_posted) <> sum(b.credits_posted) or sum(b.debits_pending) <> sum(b.credits_pending)`);
}

/** Transfer legs that are not one debit and one credit of the same amounts and asset. */
export async function findUnbalancedLegs(db: Queryable) {
  return db.query<{ transfer_id: string; leg: number }>(`
    select transfer_id, leg from entries group by transfer_id, leg
    having count(*) <> 2 or count(*) filter (where side = 'debit') <> 1
        or min(posted_amount) <> max(posted_amount) or min(pending_amount) <> max(pending_amount)
        or min(asset_id::text) <> max(asset_id::text)`);
}

/** Accounts whose stored balances differ from the sums of their entries. */
export async function findBalancesNotMatchingEntries(db: Queryable) {
  return db.query<{ account_id: string }>(`
    select b.account_id from account_balances b
      left join (select account_id,
                        coalesce(sum(posted_amount) filter (where side = 'debit'), 0) as dp,
                        coalesce(sum(posted_amount) filter (where side = 'credit'), 0) as cp,
                        coalesce(sum(pending_amount) filter (where side = 'debit'), 0) as dpe,
                        coalesce(sum(pending_amount) filter (where side = 'credit'), 0) as cpe
                   from entries group by account_id) e on e.account_id = b.account_id
     where (b.debits_posted, b.credits_posted, b.debits_pending, b.credits_pending)
           is distinct from (coalesce(e.dp, 0), coalesce(e.cp, 0), coalesce(e.dpe, 0), coalesce(e.cpe, 0))`);
}

/** Accounts whose last entry's running balance differs from their posted balance. */
export async function findRunningBalanceMismatches(db: Queryable) {
  return db.query<{ account_id: string }>(`
    select l.account_id from (select distinct on (account_id) account_id, balance_after from entries order by account_id, id desc) l
      join accounts a on a.id = l.account_id join account_balances b on b.account_id = l.account_id
     where l.balance_after <> case a.normal_side when 'credit' then b.credits_posted - b.debits_posted
                                                 else b.debits_posted - b.credits_posted end`);
}

/** Accounts whose balances break their no-overdraft flags, with which way. */
export async function findLimitViolations(db: Queryable) {
  return db.query<{ id: string; what: string }>(`
    select a.id, case when a.debits_must_not_exceed_credits then 'debits exceed credits' else 'credits exceed debits' end as what
      from accounts a join account_balances b on b.account_id = a.id
     where (a.debits_must_not_exceed_credits and b.debits_posted + b.debits_pending > b.credits_posted + b.overdraft_limit)
        or (a.credits_must_not_exceed_debits and b.credits_posted + b.credits_pending > b.debits_posted)`);
}

/**
 * Marketplaces and assets whose customer debit total (customer_debit_totals, kept by a trigger)
 * differs from the sum of the debits posted to their customers' accounts: the funding judgment's
 * bound would be wrong.
 */
export async function findCustomerDebitTotalMismatches(db: Queryable) {
  return db.query<{ marketplace_id: string; asset_id: string; stored: string; actual: string }>(`
    select coalesce(s.marketplace_id, t.marketplace_id) as marketplace_id, coalesce(s.asset_id, t.asset_id) as asset_id,
           coalesce(t.debits_posted, 0)::text as stored, coalesce(s.debits, 0)::text as actual
      from (select a.marketplace_id, a.asset_id, sum(b.debits_posted) as debits
              from accounts a join account_balances b on b.account_id = a.id
             where a.opened_by_service and a.marketplace_id is not null and a.code in ('customer_prepaid', 'customer_postpaid')
             group by a.marketplace_id, a.asset_id) s
      full join customer_debit_totals t on t.marketplace_id = s.marketplace_id and t.asset_id = s.asset_id
     where coalesce(t.debits_posted, 0) <> coalesce(s.debits, 0)`);
}

/**
 * Marketplaces, operators and assets whose earnings kept in operator_earned (parts added by
 * triggers, folded by the workers) differ from the net of their usage records not reversed: an
 * operator's balances would show the wrong earnings.
 */
export async function findOperatorEarnedMismatches(db: Queryable) {
  return db.query<{ marketplace_id: string; operator_id: string; asset_id: string; stored: string; actual: string }>(`
    select coalesce(s.marketplace_id, k.marketplace_id) as marketplace_id, coalesce(s.operator_id, k.operator_id) as operator_id,
           coalesce(s.asset_id, k.asset_id) as asset_id, coalesce(k.amount, 0)::text as stored, coalesce(s.net, 0)::text as actual
      from (select u.marketplace_id, u.operator_id, u.asset_id, sum(u.net) as net
              from usage_records u
             where not exists (select 1 from transfers r where r.reverses_id = u.transfer_id)
             group by u.marketplace_id, u.operator_id, u.asset_id) s
      full join (select marketplace_id, operator_id, asset_id, sum(amount) as amount
                   from operator_earned group by marketplace_id, operator_id, asset_id) k
        on k.marketplace_id = s.marketplace_id and k.operator_id = s.operator_id and k.asset_id = s.asset_id
     where coalesce(k.amount, 0) <> coalesce(s.net, 0)`);
}

/** Entries and usage records that name a missing (or mismatched) transfer, account or asset, described. */
export async function findBrokenReferences(db: Queryable) {
  return db.query<{ what: string }>(`
    select 'entry ' || e.id || ' names a missing ' ||
           case when t.id is null then 'transfer' when a.id is null then 'account' else 'asset' end as what
      from entries e left join transfers t on t.id = e.transfer_id left join accounts a on a.id = e.account_id
      left join assets s on s.id = e.asset_id
     where t.id is null or a.id is null or s.id is null or a.asset_id <> e.asset_id
    union all
    select 'usage record ' || u.id || ' names a missing transfer' from usage_records u
     where not exists (select 1 from transfers t where t.id = u.transfer_id)`);
}

export async function findTransfersWithoutEntries(db: Queryable) {
  return db.query<{ id: string }>(`
    select t.id from transfers t where not exists (select 1 from entries e where e.transfer_id = t.id)`);
}

/** The in-transit account a payout's hold credits (chart.payoutsInTransit: per asset and settlement route). */
const IN_TRANSIT_REF = `'payouts:in_transit:' || case p.settlement when 'evm' then p.chain_id::text when 'convert' then 'convert' else 'offchain' end`;

/**
 * Payouts whose hold is not one leg of exactly their amount, from their operator's payable to the
 * in-transit account of their asset and route: what the worker pays (the row) is not what the
 * ledger holds. One index lookup of the hold's entries per payout.
 */
export async function findPayoutsNotMatchingHolds(db: Queryable) {
  return db.query<{ id: string; amount: string; held: string | null }>(`
    select p.id::text as id, p.amount::text as amount, h.held::text as held
      from payouts p
      cross join lateral (
        select sum(e.pending_amount) filter (where e.side = 'credit') as held,
               count(*) = 2 and bool_and(e.posted_amount = 0)
               and count(*) filter (where e.side = 'credit' and a.asset_id = p.asset_id and a.marketplace_id is null
                                      and a.ref = ${IN_TRANSIT_REF}) = 1
               and count(*) filter (where e.side = 'debit' and a.asset_id = p.asset_id and a.marketplace_id is null
                                      and a.code = 'operator_payable' and a.owner_type = 'operator' and a.owner_id = p.operator_id) = 1 as shaped
          from entries e join accounts a on a.id = e.account_id
         where e.transfer_id = p.hold_transfer_id) h
     where h.held is distinct from p.amount or not coalesce(h.shaped, false)`);
}

/**
 * Confirmed payouts whose hold was not posted in full, or whose settlement (in transit → treasury)
 * did not move exactly what the hold held out of the in-transit account of their asset and route.
 */
export async function findPayoutSettlementMismatches(db: Queryable) {
  return db.query<{ id: string; held: string | null; posted: string | null; settled: string | null }>(`
    select p.id::text as id, h.held::text as held, r.posted::text as posted, s.settled::text as settled
      from payouts p
      cross join lateral (select sum(e.pending_amount) as held from entries e where e.transfer_id = p.hold_transfer_id and e.side = 'credit') h
      cross join lateral (
        select sum(e.posted_amount) as posted from transfers t join entries e on e.transfer_id = t.id
         where t.pending_id = p.hold_transfer_id and t.kind = 'post_pending' and e.side = 'credit') r
      cross join lateral (
        select sum(e.posted_amount) filter (where e.side = 'debit') as moved,
               sum(e.posted_amount) filter (where e.side = 'debit' and a.asset_id = p.asset_id and a.marketplace_id is null
                                              and a.ref = ${IN_TRANSIT_REF}) as settled,
               sum(e.posted_amount) filter (where e.side = 'credit' and a.asset_id = p.asset_id and a.marketplace_id is null and a.code = 'treasury') as paid
          from entries e join accounts a on a.id = e.account_id
         where e.transfer_id = p.settle_transfer_id) s
     where p.status = 'confirmed'
       and (r.posted is distinct from h.held or s.settled is distinct from h.held or s.moved is distinct from h.held or s.paid is distinct from h.held)`);
}

/**
 * In-transit accounts whose balance disagrees with the payouts on their way out: posted, every hold
 * posted was settled (0); pending, the holds of the payouts in flight (pending, batched, signed,
 * submitted) of their asset and route.
 */
export async function findInTransitMismatches(db: Queryable) {
  return db.query<{ asset_id: string; ref: string; posted: string; pending: string; in_flight: string }>(`
    select coalesce(a.asset_id, f.asset_id)::text as asset_id, coalesce(a.ref, f.ref) as ref,
           coalesce(a.posted, 0)::text as posted, coalesce(a.pending, 0)::text as pending, coalesce(f.amount, 0)::text as in_flight
      from (select a.asset_id, a.ref, b.credits_posted - b.debits_posted as posted, b.credits_pending - b.debits_pending as pending
              from accounts a join account_balances b on b.account_id = a.id
             where a.marketplace_id is null and a.ref like 'payouts:in_transit:%') a
      full join (select p.asset_id, ${IN_TRANSIT_REF} as ref, sum(p.amount) as amount
                   from payouts p where p.status in ('pending', 'batched', 'signed', 'submitted') group by 1, 2) f
        on f.asset_id = a.asset_id and f.ref = a.ref
     where coalesce(a.posted, 0) <> 0 or coalesce(a.pending, 0) <> coalesce(f.amount, 0)`);
}

/**
 * Payouts to an address (or, on chain, to none) that their operator never proved on that chain: no
 * change of its payout address (payout_address_events) made it that address with a challenge issued
 * to it for that chain and address, and used.
 */
export async function findPayoutsToUnprovenAddresses(db: Queryable) {
  return db.query<{ id: string; operator_id: string; chain_id: string | null; to_address: string | null }>(`
    select p.id::text as id, p.operator_id, p.chain_id::text as chain_id, p.to_address
      from payouts p
     where (p.settlement = 'evm' or p.to_address is not null)
       and not exists (
         select 1 from payout_address_events e join payout_address_challenges c on c.id = e.challenge_id
          where e.operator_id = p.operator_id and e.chain_id = p.chain_id and e.new_address = p.to_address
            and c.operator_id = p.operator_id and c.chain_id = p.chain_id and c.address = p.to_address and c.used_at is not null)`);
}

/**
 * Payments into the vault a reconciliation adjustment booked (the treasury debited for them) that
 * the ledger counts otherwise than once in full: adjusted for another amount than the chain's, or
 * also credited to a customer as a deposit.
 */
export async function findAdjustedInflowMismatches(db: Queryable) {
  return db.query<{ id: string; tx_hash: string; log_index: number; chain_amount: string; adjusted: string | null; customer_id: string | null }>(`
    select i.id::text as id, lower(i.tx_hash) as tx_hash, i.log_index, i.chain_amount::text as chain_amount, a.adjusted::text as adjusted, d.customer_id
      from reconciliation_items i
      join reconciliations r on r.id = i.reconciliation_id
      cross join lateral (select sum(e.posted_amount) as adjusted from entries e where e.transfer_id = i.adjustment_transfer_id and e.side = 'debit') a
      left join chain_deposits d on d.chain_id = r.chain_id and d.tx_hash = lower(i.tx_hash) and d.log_index = i.log_index
     where i.direction = 'in' and i.adjustment_transfer_id is not null
       and (d.tx_hash is not null or a.adjusted is distinct from i.chain_amount)
     order by i.id`);
}

/** How many assets, accounts, transfers, entries and journal seals there are (as decimal strings). */
export async function countLedgerRows(db: Queryable): Promise<{ assets: string; accounts: string; transfers: string; entries: string; seals: string }> {
  const [counts] = await db.query<{ assets: string; accounts: string; transfers: string; entries: string; seals: string }>(`
    select (select count(*) from assets)::text as assets, (select count(*) from accounts)::text as accounts,
           (select count(*) from transfers)::text as transfers, (select count(*) from entries)::text as entries,
           (select count(*) from journal_seals)::text as seals`);
  return counts!;
}

/** The journal's seals, in order. */
export async function listJournalSeals(db: Queryable) {
  return db.query<{ id: string; from_txid: string; to_txid: string; transfer_count: number; prev_hash: string; hash: string; format: number }>(
    "select id::text as id, from_txid::text as from_txid, to_txid::text as to_txid, transfer_count, prev_hash, hash, format from journal_seals order by journal_seals.id",
  );
}

export type ConversionCheckRow = {
  id: string;
  kind: "payout" | "deposit";
  payout_id: string | null;
  from_code: string;
  to_code: string;
  from_scale: number;
  to_scale: number;
  part: string;
  used: string;
  remainder: string;
  to_amount: string;
  revaluation: string;
  rate_num: string;
  rate_den: string;
  rate_id: string | null;
  stored_base_is_from: boolean | null;
  stored_num: string | null;
  stored_den: string | null;
  /** In the conversion transfer: credits less debits of the platform's conversion account in the source asset. */
  booked_used: string;
  /** In the conversion transfer: debits less credits of the platform's conversion account in the target asset. */
  booked_to: string;
};

/** Every conversion between two assets, with its stored rate and what its transfer booked through the conversion accounts. */
export async function conversionsWithBookings(db: Queryable) {
  const net = (asset: string, counter: string, sign: string) => `
    (select coalesce(sum(case when e.side = '${sign}' then e.posted_amount else -e.posted_amount end), 0) from entries e join accounts a on a.id = e.account_id
      where e.transfer_id = c.transfer_id and a.asset_id = ${asset} and a.ref = 'conversion:' || ${counter} and a.marketplace_id is null)::text`;
  return db.query<ConversionCheckRow>(`
    select c.id, c.kind, coalesce(c.payout_id::text, c.customer_id) as payout_id, fa.code as from_code, ta.code as to_code, fa.scale as from_scale, ta.scale as to_scale, c.part::text as part, c.used::text as used,
           c.remainder::text as remainder, c.to_amount::text as to_amount, c.revaluation::text as revaluation, c.rate_num::text as rate_num, c.rate_den::text as rate_den,
           c.rate_id, r.base_asset_id = c.from_asset_id as stored_base_is_from, r.num::text as stored_num, r.den::text as stored_den,
           ${net("c.from_asset_id", "ta.code", "credit")} as booked_used, ${net("c.to_asset_id", "fa.code", "debit")} as booked_to
      from conversions c join assets fa on fa.id = c.from_asset_id join assets ta on ta.id = c.to_asset_id left join rates r on r.id = c.rate_id
     where c.from_asset_id <> c.to_asset_id`);
}
