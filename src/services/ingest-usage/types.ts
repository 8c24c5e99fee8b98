import type { Booking } from "../../domain/period-rules.js";
import { canonicalJson, sha256Hex } from "../../domain/canonical.js";
import type { AccountSpec } from "../../domain/chart.js";
import { LedgerError } from "../../domain/errors.js";
import type { Split } from "../../domain/rating.js";
import type { UsageRecord } from "../../domain/usage.js";
import type { WriteReceipt } from "../../db/queries/write-receipts.js";

/** A usage record as a marketplace reports it (already checked for shape). */
export interface UsageInput {
  externalId: string;
  operatorId: string;
  customerId: string;
  resource: string;
  unit: string;
  /** Decimal string, e.g. "3600" gpu_second. */
  quantity: string;
  /** Decimal price per unit in the asset's display units, e.g. "0.000694"; or give `amount`. */
  unitPrice?: string;
  /** Total in the asset's smallest unit, e.g. "2499094". */
  amount?: string;
  asset: string;
  periodStart: Date;
  periodEnd: Date;
  /** Charge the record to this open hold of the customer instead of to the customer's balance. */
  holdId?: string;
  metadata?: Record<string, unknown>;
}

export interface UsageItem {
  marketplaceId: string;
  input: UsageInput;
  /** The receipt of the API call that posted this record alone, written with the record. */
  receipt?: WriteReceipt<WrittenUsage>;
}

/**
 * What a single call's answer is made from in the write's transaction: the record written and the
 * scale of its asset, as the planner rated it (no lookup of its own before the write).
 */
export interface WrittenUsage {
  record: UsageRecord;
  scale: number;
}

export type UsageResult =
  { status: "accepted"; record: UsageRecord } | { status: "duplicate"; record: UsageRecord } | { status: "rejected"; error: LedgerError };

/** The results of a batch while it is being worked out: one per item, undefined while still open. */
export type OpenResults = (UsageResult | undefined)[];

/** A record rated and checked, ready to become a ledger request. */
export interface Planned {
  index: number;
  item: UsageItem;
  hash: string;
  usageId: string;
  assetId: string;
  scale: number;
  split: Split;
  feeScheduleVersion: number;
  /** Its marketplace's newest fee schedule version when it was planned: one published before it is written sends it back to be rated again. */
  newestScheduleVersion: number;
  /** The effective time it is booked at: its period's end, or, in a closed period, the first open period's start (src/domain/period-rules.ts). */
  booking: Booking;
  /** Who pays: the customer's account, or the escrow of a hold. */
  payer: AccountSpec | { accountId: string };
  operator: AccountSpec;
  fees: AccountSpec[];
  /** Set when the record goes beyond its operator's capacity and its marketplace accepts such records flagged (docs/usage.md, "Capacity"), in unit-milliseconds. */
  capacityFlag?: { capacity: bigint; used: bigint; claimed: bigint };
  /** Judged by the capacity rule: the stored usage it counted over its period, read again under the capacity lock when written. */
  capacityStored?: {
    operatorId: string;
    resource: string;
    start: Date;
    end: Date;
    stored: bigint;
    /** What the judgement counted besides the stored usage: the capacity, the batch's records before this one, the claim. */
    capacity: bigint;
    fromBatch: bigint;
    claimed: bigint;
  };
}

export const hashOf = (item: UsageItem) => sha256Hex(canonicalJson(item.input));

export const usageKey = (m: string, ext: string) => `${m}|${ext}`;
/** The ledger idempotency key of a record's transfer: unambiguous for any marketplace id and external id. */
// The "usage:" prefix marks usage transfers for the event relay (src/db/event-sources.ts, EVENT_TRANSFERS).
export const ledgerKey = (m: string, ext: string) => `usage:${m.length}:${m}:${ext}`;

export function conflict(externalId: string): LedgerError {
  return new LedgerError("usage_conflict", `usage record ${externalId} was already posted with different content`);
}
