/**
 * The tables of today's schema that break a rule of their placement (distribution.ts) and what the
 * move to Citus would change in each. The list is exact: tests/integration/distribution.test.ts
 * fails when a table breaks a rule not listed here, or is listed for a rule it no longer breaks.
 *
 * Rules (Citus's, for the placement in distribution.ts):
 * - column-missing: a distributed table has no distribution column.
 * - column-nullable: its distribution column accepts null.
 * - key-without-column: a primary key, unique constraint or unique index of a distributed table does
 *   not include the distribution column (as a plain column), so it cannot be enforced per shard.
 * - foreign-key-without-column: a foreign key between two distributed tables does not pair their
 *   distribution columns, so the referenced row may be on another shard.
 * - foreign-key-across-placement: a foreign key Citus does not support between placements (allowed:
 *   distributed → reference, reference → reference, global → reference, global → global).
 */
export type DistributionRule = "column-missing" | "column-nullable" | "key-without-column" | "foreign-key-without-column" | "foreign-key-across-placement";

export interface Departure {
  rules: DistributionRule[];
  /** Why the table is so today. */
  reason: string;
  /** What the move needs. */
  migration: string;
}

const K = "key-without-column";
const MISSING = "column-missing";
const FK = "foreign-key-without-column";

export const knownDepartures: Readonly<Record<string, Departure>> = {
  accounts: {
    rules: ["column-nullable", K],
    reason:
      "Global accounts (operators' payables, protocol fees, treasury, in transit, expense, clearing) have no marketplace; the ref index folds null into '' with an expression.",
    migration:
      "Set marketplace_id = PLATFORM_KEY where null, then NOT NULL; primary key (marketplace_id, id); unique (asset_id, marketplace_id, ref) where ref is not null. Open per-marketplace operator payable and protocol fee accounts.",
  },
  account_balances: {
    rules: [MISSING, K, FK],
    reason: "Keyed by account id alone; the account's marketplace is on accounts.",
    migration:
      "Add marketplace_id NOT NULL copied from accounts; primary key (marketplace_id, account_id); foreign key (marketplace_id, account_id) → accounts (marketplace_id, id). " +
      "Its statement trigger that keeps customer_debit_totals (same shard: both by marketplace) reads accounts by id: it joins on (marketplace_id, id) once the row has it, and either runs on each shard (Citus's citus.enable_unsafe_triggers, not tried) or the writer keeps the total in its own statement.",
  },
  transfers: {
    rules: [MISSING, K],
    reason: "One journal for the whole ledger: idempotency keys, seq and the pending/reversal links are unique across it.",
    migration:
      "Add marketplace_id NOT NULL (the shard of its accounts: a transfer never spans two); primary key and every unique index (idempotency_key, seq, pending_id, reverses_id) lead with marketplace_id. seq becomes ordered per shard only. " +
      "Its row trigger that takes a reversed usage record's net out of operator_earned reads usage_records by transfer_id on the same shard (a reversal's marketplace is its usage's).",
  },
  entries: {
    rules: [MISSING, K],
    reason: "Keyed by a global identity; the marketplace is on the account.",
    migration:
      "Add marketplace_id NOT NULL (its transfer's); primary key (marketplace_id, id). Written by the same INSERT … SELECT as today, one shard per batch.",
  },
  journal_seals: {
    rules: [MISSING, K],
    reason: "One hash chain over the whole journal, cut by one server's transaction ids.",
    migration: "Add marketplace_id; primary key (marketplace_id, id): one chain per shard key, cut by the transaction ids of the node that holds the shard.",
  },
  http_idempotency: {
    rules: [MISSING, K],
    reason: 'Keyed by the caller\'s scope text ("marketplace:m1", "admin", …).',
    migration:
      "Add marketplace_id NOT NULL: the key's marketplace, PLATFORM_KEY for admin, finance and operator keys; primary key (marketplace_id, scope, key).",
  },
  audit_log: {
    rules: [MISSING, K],
    reason: "One log for every key; the scope is role and scope_id.",
    migration: "Add marketplace_id NOT NULL by the same rule as http_idempotency; primary key (marketplace_id, id).",
  },
  usage_records: {
    rules: [K],
    reason: "Primary key on the record's id alone (the external id is already unique per marketplace).",
    migration: "Primary key (marketplace_id, id): build the unique index concurrently, then ALTER TABLE … ADD PRIMARY KEY USING INDEX; dispute_items follows.",
  },
  usage_batches: {
    rules: [K],
    reason: "Primary key on the batch id alone (its idempotency key is already unique per marketplace and tenant).",
    migration: "Primary key (marketplace_id, id).",
  },
  usage_batch_rejections: {
    rules: [MISSING, K],
    reason: "Keyed by the batch id; the marketplace is on usage_batches.",
    migration: "Add marketplace_id NOT NULL (its batch's); primary key (marketplace_id, batch_id, record_index).",
  },
  holds: {
    rules: [K, FK],
    reason: "Primary key on the hold id; its escrow account and opening transfer are referenced by id alone.",
    migration:
      "Primary key (marketplace_id, id); foreign keys (marketplace_id, escrow_account_id) → accounts and (marketplace_id, open_transfer_id) → transfers once those lead with marketplace_id.",
  },
  disputes: {
    rules: [K],
    reason: "Primary key on the dispute id alone.",
    migration: "Primary key (marketplace_id, id).",
  },
  dispute_items: {
    rules: [MISSING, K, FK],
    reason: "Keyed by (dispute, usage record); the marketplace is on the dispute.",
    migration:
      "Add marketplace_id NOT NULL (its dispute's); primary key (marketplace_id, dispute_id, usage_id); open-usage index (marketplace_id, usage_id) where open; foreign keys with marketplace_id to disputes and usage_records.",
  },
  dispute_events: {
    rules: [MISSING, K, FK],
    reason: "Keyed by a global serial; the marketplace is on the dispute.",
    migration: "Add marketplace_id NOT NULL; primary key (marketplace_id, id); foreign key (marketplace_id, dispute_id) → disputes.",
  },
  funds_receipts: {
    rules: [K],
    reason: "Money with one reference is received once whatever the marketplace: (asset, reference) is unique platform-wide.",
    migration:
      "Primary key (marketplace_id, id); the platform-wide rule stays on proposals (global: proposals_receipt_reference_uq), the shard's index becomes (marketplace_id, asset_id, reference_key).",
  },
  chain_deposits: {
    rules: [K],
    reason: "A log is credited once: the key is (chain, tx, log).",
    migration:
      "Primary key (marketplace_id, chain_id, tx_hash, log_index): a log's from-address maps to one marketplace (deposit_addresses, a reference table unique per address), so a log always lands on one shard and is still credited once.",
  },
  balance_monitors: {
    rules: ["foreign-key-across-placement"],
    reason: "A monitor (global, evaluated by the event relay) references its account, which lives on a shard.",
    migration:
      "Drop the foreign key (the service checks the account when the monitor is made; verify checks the reference), or distribute monitors with their account's marketplace_id.",
  },
};
