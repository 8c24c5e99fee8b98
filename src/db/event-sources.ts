/**
 * How each kind of event is derived from what the ledger already stores (docs/api.md, "Events"):
 * one SELECT per source over the rows written by database transactions with txid in [$1, $2), all
 * of them finished. Each yields (txid, rank, ord, type, marketplace_id, operator_id, resource_type,
 * resource_id, data, occurred_at); the relay orders the union by (txid, rank, ord, resource_id) and
 * numbers it. Raw SQL: set-based, run behind the writers, never per record.
 *
 * Amounts are strings (numeric::text); times are ISO 8601 in UTC (the relay pins TimeZone).
 */

/**
 * The transfers that are events of their own: all but usage transfers (their batch is one usage
 * event). Written as the predicate of the partial index transfers_events_idx, so the relay reads
 * through that index and never touches a usage transfer.
 */
export const EVENT_TRANSFERS = "idempotency_key not like 'usage:%'";

/** A transfer's type by its kind. */
const transfers = `
  select t.txid, 1 as rank, t.seq as ord,
         'transfer.' || case t.kind when 'standard' then 'posted' when 'pending' then 'pending'
                                    when 'post_pending' then 'pending_posted' when 'void_pending' then 'pending_voided'
                                    when 'expire_pending' then 'pending_expired' else 'reversed' end as type,
         s.marketplace_id, s.operator_id, 'transfer' as resource_type, t.id::text as resource_id,
         jsonb_build_object('transfer_id', t.id, 'kind', t.kind, 'pending_id', t.pending_id, 'reverses_id', t.reverses_id,
                            'effective_at', t.effective_at, 'metadata', t.metadata, 'legs', s.legs) as data,
         t.created_at as occurred_at
    from transfers t
    cross join lateral (
      select case when count(distinct a.marketplace_id) = 1 then min(a.marketplace_id) end as marketplace_id,
             case when count(distinct a.owner_id) filter (where a.owner_type = 'operator') = 1
                  then min(a.owner_id) filter (where a.owner_type = 'operator') end as operator_id,
             (select jsonb_agg(jsonb_build_object('leg', d.leg, 'debit_account_id', d.account_id, 'credit_account_id', c.account_id,
                                                  'asset_id', d.asset_id,
                                                  'amount', (case when d.posted_amount <> 0 then d.posted_amount else abs(d.pending_amount) end)::text)
                               order by d.leg)
                from entries d join entries c on c.transfer_id = d.transfer_id and c.leg = d.leg and c.side = 'credit'
               where d.transfer_id = t.id and d.side = 'debit') as legs
        from entries e join accounts a on a.id = e.account_id
       where e.transfer_id = t.id) s
   where t.txid >= $1::bigint and t.txid < $2::bigint and t.${EVENT_TRANSFERS}`;

/** One event per ingest transaction and marketplace (not per record): counts and totals per asset. */
const usageBatches = `
  select g.txid, 2 as rank, min(g.ord) as ord, 'usage.batch.completed' as type, g.marketplace_id, null::text as operator_id,
         'usage_batch' as resource_type, g.txid::text as resource_id,
         jsonb_build_object('marketplace_id', g.marketplace_id, 'accepted', sum(g.n)::bigint,
                            'effective_from', min(g.effective_from), 'effective_to', max(g.effective_to),
                            'totals', jsonb_agg(jsonb_build_object('asset_id', g.asset_id, 'records', g.n, 'gross', g.gross::text, 'net', g.net::text)
                                                order by g.asset_id)) as data,
         max(g.at) as occurred_at
    from (select u.txid, u.marketplace_id, u.asset_id, count(*) as n, sum(u.gross) as gross, sum(u.net) as net,
                 min(u.funding_seq) as ord, min(u.effective_at) as effective_from, max(u.effective_at) as effective_to, max(u.created_at) as at
            from usage_records u
           where u.txid >= $1::bigint and u.txid < $2::bigint
           group by u.txid, u.marketplace_id, u.asset_id) g
   group by g.txid, g.marketplace_id`;

/**
 * Every state a payout entered (payout_events is its append-only history); tx_hash and
 * block_number are the payout's as the relay reads it (set once it is confirmed).
 */
const payouts = `
  select pe.txid, 3 as rank, pe.id as ord, 'payout.' || pe.status as type, null::text as marketplace_id, p.operator_id,
         'payout' as resource_type, p.id::text as resource_id,
         jsonb_build_object('payout_id', p.id, 'operator_id', p.operator_id, 'status', pe.status, 'amount', p.amount::text,
                            'asset_id', p.asset_id, 'settlement', p.settlement, 'chain_id', p.chain_id::text, 'to_address', p.to_address,
                            'tx_hash', p.tx_hash, 'block_number', p.block_number::text, 'detail', pe.detail) as data,
         pe.at as occurred_at
    from payout_events pe join payouts p on p.id = pe.payout_id
   where pe.txid >= $1::bigint and pe.txid < $2::bigint`;

/** A reconciliation run, then each of its items that does not match (finance only). */
const reconciliations = `
  select r.txid, 4 as rank, 0::bigint as ord, 'reconciliation.completed' as type, null::text, null::text,
         'reconciliation', r.id::text,
         jsonb_build_object('reconciliation_id', r.id, 'chain_id', r.chain_id::text, 'asset_id', r.asset_id,
                            'from_block', r.from_block::text, 'to_block', r.to_block::text, 'summary', r.summary),
         r.created_at
    from reconciliations r
   where r.txid >= $1::bigint and r.txid < $2::bigint
  union all
  select i.txid, 5, i.id, 'reconciliation.item.mismatch', null::text, null::text, 'reconciliation_item', i.id::text,
         jsonb_build_object('reconciliation_id', i.reconciliation_id, 'item_id', i.id::text, 'status', i.status, 'direction', i.direction,
                            'payout_id', i.payout_id, 'tx_hash', i.tx_hash, 'log_index', i.log_index, 'block_number', i.block_number::text,
                            'ledger_amount', i.ledger_amount::text, 'chain_amount', i.chain_amount::text,
                            'ledger_address', i.ledger_address, 'chain_address', i.chain_address, 'detail', i.detail),
         r.created_at
    from reconciliation_items i join reconciliations r on r.id = i.reconciliation_id
   where i.txid >= $1::bigint and i.txid < $2::bigint and i.status <> 'matched'`;

/**
 * Holds: opened (the transaction of its opening transfer is in range) and closed or expired (its
 * status changed in range; a trigger keeps holds.txid at the transaction that last changed the status).
 */
const holds = `
  select ot.txid, 6 as rank, 0::bigint as ord, 'hold.opened' as type, h.marketplace_id, null::text, 'hold', h.id::text,
         jsonb_build_object('hold_id', h.id, 'customer_id', h.customer_id, 'asset_id', h.asset_id, 'amount', h.amount::text,
                            'expires_at', h.expires_at, 'open_transfer_id', h.open_transfer_id),
         h.created_at
    from holds h join transfers ot on ot.id = h.open_transfer_id
   where h.txid >= $1::bigint and ot.txid >= $1::bigint and ot.txid < $2::bigint
  union all
  select h.txid, 7, 0::bigint, 'hold.' || h.status, h.marketplace_id, null::text, 'hold', h.id::text,
         jsonb_build_object('hold_id', h.id, 'customer_id', h.customer_id, 'asset_id', h.asset_id, 'amount', h.amount::text,
                            'status', h.status, 'closed_at', h.closed_at),
         coalesce(h.closed_at, h.created_at)
    from holds h
   where h.txid >= $1::bigint and h.txid < $2::bigint and h.status <> 'open'`;

/** Proposals decided (admin and finance only), and accounting periods that changed status. */
const decisions = `
  select p.txid, 8 as rank, 0::bigint as ord, 'proposal.' || p.status as type, null::text, null::text, 'proposal', p.id::text,
         jsonb_build_object('proposal_id', p.id, 'kind', p.kind, 'marketplace_id', p.marketplace_id, 'status', p.status,
                            'proposed_by', p.proposed_by, 'decided_by', p.decided_by, 'reason', p.reason, 'result', p.result),
         coalesce(p.decided_at, p.proposed_at)
    from proposals p
   where p.txid >= $1::bigint and p.txid < $2::bigint and p.status <> 'proposed'
  union all
  select ap.txid, 9, 0::bigint, 'period.' || case ap.status when 'open' then 'reopened' else ap.status end,
         ap.marketplace_id, null::text, 'period', ap.marketplace_id || ':' || ap.period,
         jsonb_build_object('marketplace_id', ap.marketplace_id, 'period', ap.period, 'status', ap.status,
                            'starts_at', ap.starts_at, 'ends_at', ap.ends_at, 'changed_by', ap.changed_by, 'proposal_id', ap.proposal_id),
         ap.changed_at
    from accounting_periods ap
   where ap.txid >= $1::bigint and ap.txid < $2::bigint`;

/**
 * Each change of an operator's payout address (its own, or an approved proposal), for the
 * operator: money it is owed goes to the new address from now on.
 */
const payoutAddresses = `
  select e.txid, 10 as rank, e.id as ord, 'payout_address.changed' as type, null::text, e.operator_id,
         'payout_address', e.operator_id || ':' || e.chain_id::text,
         jsonb_build_object('operator_id', e.operator_id, 'chain_id', e.chain_id::text, 'old_address', e.old_address,
                            'new_address', e.new_address, 'changed_by', e.changed_by),
         e.changed_at
    from payout_address_events e
   where e.txid >= $1::bigint and e.txid < $2::bigint`;

/** Every derived event of the range, in the order positions are given. */
export const DERIVE_EVENTS = [transfers, usageBatches, payouts, reconciliations, holds, decisions, payoutAddresses].join("\n  union all\n");
