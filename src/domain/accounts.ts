export type Side = "debit" | "credit";

/** An account's four totals (TigerBeetle's model); each is a non-negative uint256. */
export interface Balances {
  debitsPosted: bigint;
  creditsPosted: bigint;
  debitsPending: bigint;
  creditsPending: bigint;
}

export interface AccountLimits {
  normalSide: Side;
  debitsMustNotExceedCredits: boolean;
  creditsMustNotExceedDebits: boolean;
  /** With debitsMustNotExceedCredits: how far debits may exceed credits (a postpaid customer's credit limit); 0 when absent. */
  overdraftLimit?: bigint;
}

export const zeroBalances = (): Balances => ({
  debitsPosted: 0n,
  creditsPosted: 0n,
  debitsPending: 0n,
  creditsPending: 0n,
});

/** Posted balance on the account's normal side (may be negative, e.g. an overdrawn receivable). */
export function postedBalance(side: Side, b: Balances): bigint {
  return side === "credit" ? b.creditsPosted - b.debitsPosted : b.debitsPosted - b.creditsPosted;
}

/**
 * What the account may spend now: the posted balance on its normal side, less the holds that
 * would move it away from that side (pending debits of a credit account, and vice versa).
 * Incoming pending amounts are not available until posted.
 */
export function availableBalance(side: Side, b: Balances): bigint {
  return side === "credit" ? b.creditsPosted - b.debitsPosted - b.debitsPending : b.debitsPosted - b.creditsPosted - b.creditsPending;
}

/** Which limit, if any, the balances break. Pending amounts count against the limit (holds reserve). */
export function brokenLimit(a: AccountLimits, b: Balances): "exceeds_credits" | "exceeds_debits" | undefined {
  if (a.debitsMustNotExceedCredits && b.debitsPosted + b.debitsPending > b.creditsPosted + (a.overdraftLimit ?? 0n)) return "exceeds_credits";
  if (a.creditsMustNotExceedDebits && b.creditsPosted + b.creditsPending > b.debitsPosted) return "exceeds_debits";
  return undefined;
}

export interface Account {
  id: string;
  assetId: string;
  ref: string | null;
  code: string;
  marketplaceId: string | null;
  ownerType: string | null;
  ownerId: string | null;
  normalSide: Side;
  debitsMustNotExceedCredits: boolean;
  creditsMustNotExceedDebits: boolean;
  metadata: Record<string, unknown>;
  /** Part of the service's chart of accounts (opened by the service, not through the API). */
  openedByService: boolean;
  createdAt: Date;
}

export interface AccountBalance extends Balances {
  accountId: string;
  /** Posted balance on the normal side. */
  posted: bigint;
  /** Posted balance less outgoing holds: what the account may spend now. */
  available: bigint;
}

export interface Entry {
  id: string;
  transferId: string;
  leg: number;
  side: Side;
  postedAmount: bigint;
  pendingAmount: bigint;
  balanceAfter: bigint;
  effectiveAt: Date;
  createdAt: Date;
}

export interface Page<T> {
  items: T[];
  /** Pass back as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}
