/**
 * Every way a ledger write can be refused, as a closed set of stable codes (after TigerBeetle's
 * result codes). The HTTP layer maps each code to a status in one place.
 */
export const ledgerErrorCodes = [
  /** The request is malformed: see `issues` for each invalid field. Nothing was checked against state. */
  "invalid_request",
  "asset_not_found",
  "asset_exists",
  "account_not_found",
  "account_exists",
  /** A leg's debit and credit accounts hold different assets. */
  "asset_mismatch",
  /** The debit account has debits_must_not_exceed_credits and this transfer would break it. */
  "exceeds_credits",
  /** The credit account has credits_must_not_exceed_debits and this transfer would break it. */
  "exceeds_debits",
  /** A balance would pass 2^256 - 1. */
  "overflow",
  /** The idempotency key was used before for a different request. */
  "idempotency_conflict",
  "pending_not_found",
  /** The referenced transfer exists but is not a pending transfer. */
  "not_pending",
  "pending_already_posted",
  "pending_already_voided",
  "pending_expired",
  "post_amount_exceeds_pending",
  /** A partial amount can only be given when the pending transfer has a single leg. */
  "partial_post_needs_single_leg",
  "transfer_not_found",
  "already_reversed",
  /** The asset was retired: no new accounts, transfers, usage, holds or deposits in it. */
  "asset_retired",
  /** Payouts of the asset are on their way on its current settlement: it cannot change until they end. */
  "payouts_in_flight",
  /** Pending transfers are voided, not reversed; reversals of reversals are not allowed. */
  "not_reversible",
  // usage
  "marketplace_not_found",
  "marketplace_exists",
  "customer_not_found",
  "customer_exists",
  /** The customer was retired: no new usage, holds or deposits for it. */
  "customer_retired",
  /** The operator does not exist or does not sell through this marketplace. */
  "operator_not_found",
  "operator_exists",
  /** No invitation of the operator by that marketplace. */
  "invitation_not_found",
  "no_fee_schedule",
  "fee_schedule_exists",
  /** The record's period ends too far in the future. */
  "usage_in_future",
  "usage_limit_exceeded",
  /** The record claims more of a resource than its operator declared it can sell over the record's period (all marketplaces together). */
  "capacity_exceeded",
  /** A version of the operator's capacity of that resource takes effect at that instant already. */
  "capacity_exists",
  /** The operator has set no costs of that resource (or they are not the caller's to see). */
  "operator_costs_not_found",
  /** A postpaid customer's usage would take what it owes beyond its credit limit in the asset. */
  "credit_limit_exceeded",
  /** A marketplace's credit limit cannot be lowered below the credit operators were already paid from. */
  "credit_limit_in_use",
  /** Quantity × price is less than one smallest unit of the asset. */
  "rates_to_zero",
  /** The same external_id was posted before with different content. */
  "usage_conflict",
  /** Not written because another record of an atomic batch was rejected. */
  "atomic_batch_aborted",
  "usage_not_found",
  "usage_batch_not_found",
  "hold_not_found",
  /** The hold was closed or expired: usage can no longer be charged to it. */
  "hold_closed",
  // payouts
  "payout_not_found",
  /** The payout is no longer pending: it is on its way to the chain, or already ended. */
  "payout_not_pending",
  /** The operator has no verified payout address on the chain the asset settles on. */
  "payout_address_missing",
  /** Less than the asset's payout policy minimum. */
  "payout_below_minimum",
  "payout_limit_exceeded",
  /** The operator's earnings asked for wait for money not yet received (docs/ledger.md, "Funded earnings"). */
  "payout_unfunded",
  /** The payout is above its policy's approval threshold and no second key approved it yet. */
  "payout_not_approved",
  /** The asset settles on a chain this service has no settings for. */
  "chain_not_configured",
  /** Nothing gives a rate between two assets: no price feed is configured for the pair and finance entered no rate. */
  "no_rate_source",
  "challenge_not_found",
  /** The address challenge expired, was used already, or was issued for another operator, chain or address. */
  "challenge_invalid",
  /** The signature was not made by the address over the challenge's message. */
  "signature_invalid",
  // reconciliation
  "reconciliation_not_found",
  "reconciliation_item_not_found",
  "item_already_resolved",
  // who is calling
  /** The API key was revoked before the write committed (src/db/queries/key-guard.ts): nothing was written. */
  "unauthorized",
  // four eyes
  /** The caller's role may not do this (e.g. decide a kind of proposal it may not approve). */
  "forbidden",
  "proposal_not_found",
  /** The proposal was approved or rejected already. */
  "proposal_decided",
  /** What the proposal would change has changed since it was made: reject it and propose again. */
  "proposal_outdated",
  /** A proposal is decided by another key than the one that proposed it. */
  "four_eyes",
  /** Money with this reference was recorded (or proposed) already. */
  "receipt_exists",
  // disputes and clawbacks
  "dispute_not_found",
  /** The dispute was upheld or rejected already: a dispute is decided once. */
  "dispute_decided",
  /** The usage record is in an open dispute: it is decided there (not disputed twice, not reversed by hand). */
  "usage_disputed",
  /** The record was booked longer ago than its marketplace's dispute window. */
  "dispute_window_closed",
  /** Part of the operator's funded earnings is held by open disputes or owed back to the platform (its receivable). */
  "payout_withheld",
  // accounting periods
  /** The period the effective time falls in is being closed: nothing new is back-dated into it. */
  "period_closing",
  /** The period cannot change to the status asked from the one it has (or has not ended yet). */
  "period_transition",
  /** An explicit effective time inside a closed period: nothing posts into it. */
  "period_closed",
  // webhooks
  "webhook_endpoint_not_found",
  /** No delivery of the endpoint, and no event it would receive, has this id. */
  "webhook_delivery_not_found",
  /** The URL is not one the service sends webhooks to (scheme, or an address that is private, loopback or link-local). */
  "webhook_url_refused",
  // events
  /** No balance monitor has this id that this key may see. */
  "balance_monitor_not_found",
] as const;

export type LedgerErrorCode = (typeof ledgerErrorCodes)[number];

export interface FieldIssue {
  path: string;
  message: string;
}

export class LedgerError extends Error {
  constructor(
    readonly code: LedgerErrorCode,
    message: string,
    readonly issues: FieldIssue[] = [],
  ) {
    super(message);
    this.name = "LedgerError";
  }
}

/**
 * A write that met concurrent changes to what it was judged on every time it was tried (it wrote
 * nothing): answered 503 with Retry-After, to be retried with the same Idempotency-Key.
 */
export class WriteContended extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WriteContended";
  }
}
