/**
 * Where every table goes when the service runs on Citus (docs/scaling.md, "Beyond one primary"):
 *
 * - distributed: sharded by `column` (the marketplace); every row belongs to one marketplace, and the
 *   ingest path only ever touches one marketplace's rows, so its statements run on one shard.
 *   Platform rows of a distributed table (global ledger accounts and their journal) carry the
 *   reserved key PLATFORM_KEY, which no marketplace id can take (ids start with a letter or digit).
 * - reference: small, read by every shard, rarely written; one copy on every node.
 * - global: stays on the coordinator (a Citus local table); written by platform work off the ingest
 *   path (payouts, chain, reconciliation, events). A transaction that mixes it with a shard is a
 *   distributed (two-phase) transaction, which the design allows only off the ingest path.
 *
 * tests/integration/distribution.test.ts reads the migrated catalog and fails when a table is not
 * placed here, a placed table is gone, or a table breaks a rule Citus imposes without being listed,
 * with the same rules, in distribution-departures.ts.
 */

export type TableClass = "distributed" | "reference" | "global";

export interface TablePlacement {
  class: TableClass;
  /** The distribution column of a distributed table. */
  column?: string;
}

/** The distribution key of the platform's own rows (global ledger accounts and their journal). */
export const PLATFORM_KEY = "_platform";

const byMarketplace: TablePlacement = { class: "distributed", column: "marketplace_id" };
const reference: TablePlacement = { class: "reference" };
const global: TablePlacement = { class: "global" };

export const tablePlacement: Readonly<Record<string, TablePlacement>> = {
  // The ledger: each marketplace's accounts and journal on its shard; the platform's under PLATFORM_KEY.
  accounts: byMarketplace,
  account_balances: byMarketplace,
  transfers: byMarketplace,
  entries: byMarketplace,
  journal_seals: byMarketplace,
  // What a marketplace's requests write in the same transaction as their change.
  http_idempotency: byMarketplace,
  audit_log: byMarketplace,
  // A marketplace's own data.
  customers: byMarketplace,
  fee_schedules: byMarketplace,
  usage_limits: byMarketplace,
  capacity_policies: byMarketplace,
  marketplace_credit_limits: byMarketplace,
  marketplace_dispute_settings: byMarketplace,
  marketplace_operators: byMarketplace,
  operator_invitations: byMarketplace,
  accounting_periods: byMarketplace,
  // Written by usage ingest, with the records.
  usage_records: byMarketplace,
  // Kept by triggers on usage_records and transfers, in the statement that writes them (on its shard).
  operator_earned: byMarketplace,
  usage_batches: byMarketplace,
  usage_batch_rejections: byMarketplace,
  usage_capacity_flags: byMarketplace,
  rate_lock_queue: byMarketplace,
  holds: byMarketplace,
  // Money received for a marketplace, written with the transfer that credits it.
  funds_receipts: byMarketplace,
  chain_deposits: byMarketplace,
  // Kept by a trigger in the transaction that changes a customer's balance (on its shard).
  customer_debit_totals: byMarketplace,
  // Moved by the workers from the marketplace's usage records (on its shard).
  usage_funding_marks: byMarketplace,
  usage_funding_mark_customers: byMarketplace,
  disputes: byMarketplace,
  dispute_items: byMarketplace,
  dispute_events: byMarketplace,

  // Read by every shard, rarely written.
  assets: reference,
  asset_settlements: reference,
  marketplaces: reference,
  operators: reference,
  operator_capacity: reference,
  api_keys: reference,
  rates: reference,
  deposit_addresses: reference,
  deployment: reference,

  // The platform's side: payouts and the chain, conversions, reconciliation, four eyes, events.
  payouts: global,
  payout_events: global,
  payout_policies: global,
  operator_payout_limits: global,
  payout_preferences: global,
  payout_address_challenges: global,
  payout_addresses: global,
  payout_address_events: global,
  chain_senders: global,
  chain_transactions: global,
  chain_tx_attempts: global,
  chain_cursors: global,
  receipt_rechecks: global,
  receipt_named_deposits: global,
  conversions: global,
  rate_locks: global,
  // Which records each lock was made from (the lock worker writes it; a reversal of usage, off the ingest path, reads it).
  rate_lock_records: global,
  reconciliations: global,
  reconciliation_items: global,
  proposals: global,
  operator_costs: global,
  events: global,
  event_relay: global,
  webhook_endpoints: global,
  webhook_deliveries: global,
  balance_monitors: global,
};
