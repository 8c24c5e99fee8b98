import { LedgerError } from "./errors.js";

/**
 * Disputes of usage records (docs/reconciliation.md, "Disputes"). A marketplace (for its customers)
 * or finance opens one; while it is open its records' operator earnings are held, not payable;
 * finance or an admin decides it once: upheld (the records are reversed, the customers refunded) or
 * rejected (the earnings are released).
 */
export const DISPUTE_STATUSES = ["open", "upheld", "rejected"] as const;
export type DisputeStatus = (typeof DISPUTE_STATUSES)[number];

/** The only transitions: a dispute is decided once. */
const NEXT: Record<DisputeStatus, readonly DisputeStatus[]> = { open: ["upheld", "rejected"], upheld: [], rejected: [] };

export function mayBecome(from: DisputeStatus, to: DisputeStatus): boolean {
  return NEXT[from].includes(to);
}

/** How long after it was booked a record may be disputed, unless an admin set another window for its marketplace. */
export const DEFAULT_DISPUTE_WINDOW_DAYS = 60;
export const MAX_DISPUTE_WINDOW_DAYS = 3650;
/** Records in one dispute: enough for a customer's bad job, few enough to decide in one transaction. */
export const MAX_DISPUTE_RECORDS = 100;

export interface Dispute {
  id: string;
  marketplaceId: string;
  status: DisputeStatus;
  reason: string;
  openedBy: string;
  openedAt: Date;
  decidedBy: string | null;
  decidedAt: Date | null;
  decisionNote: string | null;
  items: DisputeItem[];
}

export interface DisputeItem {
  usageId: string;
  externalId: string;
  operatorId: string;
  assetId: string;
  asset: string;
  scale: number;
  /** The operator's earnings of the record that the dispute holds. */
  net: bigint;
  gross: bigint;
  /** posted, or reversed (an upheld dispute's records). */
  usageStatus: "posted" | "reversed";
}

/**
 * The window is judged on the record's booking time (`created_at`, from the service's clock), not
 * on its effective time, which the marketplace chooses: a record posted late keeps the whole window,
 * and no tenant can date a record so that it can no longer be disputed (or disputed for ever).
 */
export function disputeWindowEnd(bookedAt: Date, windowDays: number): Date {
  return new Date(bookedAt.getTime() + windowDays * 86_400_000);
}

/** Refuses a record whose window has closed (`dispute_window_closed`). */
export function checkInWindow(r: { id: string; createdAt: Date }, windowDays: number, now: Date, marketplaceId: string): void {
  const end = disputeWindowEnd(r.createdAt, windowDays);
  if (now.getTime() >= end.getTime()) {
    throw new LedgerError(
      "dispute_window_closed",
      `usage record ${r.id} was booked at ${r.createdAt.toISOString()}; marketplace ${marketplaceId}'s dispute window of ${windowDays} days closed at ${end.toISOString()}`,
      [{ path: "usage_ids", message: `record ${r.id} is outside the dispute window` }],
    );
  }
}
