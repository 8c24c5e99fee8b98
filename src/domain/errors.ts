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
  /** Pending transfers are voided, not reversed; reversals of reversals are not allowed. */
  "not_reversible",
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
