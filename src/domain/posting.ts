import { brokenLimit, postedBalance, type AccountLimits, type Balances, type Side } from "./accounts.js";
import { FUTURE_TOLERANCE_MS } from "./clock.js";
import { LedgerError } from "./errors.js";
import { UINT256_MAX } from "./money.js";
import { requestHash, validateTransferInput, type TransferInput, type TransferKind } from "./transfers.js";

export interface AccountState extends AccountLimits {
  id: string;
  assetId: string;
  balances: Balances;
}

/** A leg as recorded: posted and pending movements (pending is negative when a hold is released). */
export interface LegRecord {
  debitAccountId: string;
  creditAccountId: string;
  assetId: string;
  postedAmount: bigint;
  pendingAmount: bigint;
}

export interface TransferRecord {
  id: string;
  idempotencyKey: string;
  requestHash: string;
  kind: TransferKind;
  pendingId: string | null;
  reversesId: string | null;
  timeoutAt: Date | null;
  effectiveAt: Date;
  metadata: Record<string, unknown>;
  legs: LegRecord[];
}

export interface EntryRecord {
  transferId: string;
  leg: number;
  accountId: string;
  assetId: string;
  side: Side;
  postedAmount: bigint;
  pendingAmount: bigint;
  /** Posted balance on the account's normal side after this entry. */
  balanceAfter: bigint;
  effectiveAt: Date;
}

/** What every planned transfer starts from: its identity and request, before the legs its kind decides. */
type PlannedBase = Omit<TransferRecord, "legs">;

export type ExecuteResult = { status: "created"; transfer: TransferRecord; entries: EntryRecord[] } | { status: "replayed"; transferId: string };

/**
 * The rules of the ledger over an in-memory slice of its state: the accounts a batch touches, the
 * transfers it refers to, and the idempotency keys it uses. The batch writer loads that slice from
 * the database under row locks, runs every request through `execute` in order, and writes what
 * comes out; property tests run the very same rules against a whole in-memory ledger.
 */
export class LedgerState {
  readonly accounts = new Map<string, AccountState>();
  readonly transfers = new Map<string, TransferRecord>();
  /** pending id -> kind of the transfer that resolved it */
  readonly resolutions = new Map<string, TransferKind>();
  readonly reversed = new Set<string>();
  /** idempotency key -> request hash and transfer id */
  readonly keys = new Map<string, { requestHash: string; transferId: string }>();

  constructor(public now: Date) {}

  /**
   * Validates, plans and applies one request. Throws LedgerError and changes nothing on refusal.
   * `checked` is the request's hash when the caller has already validated it and hashed it (so
   * that a writer can do that work before it takes its locks).
   */
  execute(input: TransferInput, newId: string, checked?: { hash: string }): ExecuteResult {
    if (!checked) validateTransferInput(input);
    const hash = checked?.hash ?? requestHash(input);
    const seen = this.keys.get(input.idempotencyKey);
    if (seen) {
      if (seen.requestHash !== hash) {
        throw new LedgerError("idempotency_conflict", `idempotency key "${input.idempotencyKey}" was used for a different request`);
      }
      return { status: "replayed", transferId: seen.transferId };
    }
    const transfer = this.plan(input, input.id ?? newId, hash);
    const entries = this.apply(transfer);
    this.transfers.set(transfer.id, transfer);
    this.keys.set(transfer.idempotencyKey, { requestHash: hash, transferId: transfer.id });
    if (transfer.pendingId) this.resolutions.set(transfer.pendingId, transfer.kind);
    if (transfer.reversesId) this.reversed.add(transfer.reversesId);
    return { status: "created", transfer, entries };
  }

  /** The transfer a request makes, by the rules of its kind; throws LedgerError when they refuse it. */
  private plan(input: TransferInput, id: string, hash: string): TransferRecord {
    if (this.transfers.has(id)) throw new LedgerError("invalid_request", `transfer id ${id} is already taken`, [{ path: "id", message: "is already taken" }]);
    // Money moves when it is recorded or before (a late record), never ahead of the clock (but for its skew).
    if (input.effectiveAt !== undefined && input.effectiveAt.getTime() > this.now.getTime() + FUTURE_TOLERANCE_MS) {
      throw new LedgerError(
        "invalid_request",
        `the effective time ${input.effectiveAt.toISOString()} is more than ${FUTURE_TOLERANCE_MS / 60_000} minutes after now (${this.now.toISOString()})`,
        [{ path: "effectiveAt", message: "is in the future" }],
      );
    }
    const base: PlannedBase = {
      id,
      idempotencyKey: input.idempotencyKey,
      requestHash: hash,
      kind: input.kind,
      pendingId: null,
      reversesId: null,
      timeoutAt: null,
      effectiveAt: input.effectiveAt ?? this.now,
      metadata: input.metadata ?? {},
    };
    switch (input.kind) {
      case "standard":
      case "pending":
        return this.planMovement(input, base);
      case "post_pending":
      case "void_pending":
      case "expire_pending":
        return this.planResolution(input, base);
      case "reversal":
        return this.planReversal(input, base);
    }
  }

  /** Standard (posted at once) or pending (held until posted, voided or expired): the legs as given. */
  private planMovement(input: Extract<TransferInput, { kind: "standard" | "pending" }>, base: PlannedBase): TransferRecord {
    const pending = input.kind === "pending";
    const legs = input.legs.map((leg, i) => {
      const asset = this.legAsset(leg.debitAccountId, leg.creditAccountId, i);
      return pending
        ? { debitAccountId: leg.debitAccountId, creditAccountId: leg.creditAccountId, assetId: asset, postedAmount: 0n, pendingAmount: leg.amount }
        : { debitAccountId: leg.debitAccountId, creditAccountId: leg.creditAccountId, assetId: asset, postedAmount: leg.amount, pendingAmount: 0n };
    });
    const timeoutAt = pending && input.timeoutSeconds !== undefined ? new Date(this.now.getTime() + input.timeoutSeconds * 1000) : null;
    return { ...base, timeoutAt, legs };
  }

  /** Posting (all or part of it), voiding or expiring an open pending transfer: releases its hold. */
  private planResolution(input: Extract<TransferInput, { kind: "post_pending" | "void_pending" | "expire_pending" }>, base: PlannedBase): TransferRecord {
    const pending = this.openPending(input.pendingId, input.kind);
    if (input.effectiveAt !== undefined) notBefore(input.effectiveAt, pending, "posts");
    let postAmount: bigint | undefined;
    if (input.kind === "post_pending" && input.amount !== undefined) {
      if (pending.legs.length !== 1) {
        throw new LedgerError("partial_post_needs_single_leg", "a partial amount can only be posted for a pending transfer with one leg");
      }
      if (input.amount > pending.legs[0]!.pendingAmount) {
        throw new LedgerError("post_amount_exceeds_pending", `amount ${input.amount} exceeds the pending amount ${pending.legs[0]!.pendingAmount}`);
      }
      postAmount = input.amount;
    }
    const legs = pending.legs.map((leg) => ({
      ...leg,
      postedAmount: input.kind === "post_pending" ? (postAmount ?? leg.pendingAmount) : 0n,
      pendingAmount: -leg.pendingAmount,
    }));
    // Not before the hold it acts on (one dated ahead of the clock, within its skew): then at the hold's instant.
    const effectiveAt = input.effectiveAt ?? (pending.effectiveAt.getTime() > base.effectiveAt.getTime() ? pending.effectiveAt : base.effectiveAt);
    return { ...base, effectiveAt, pendingId: pending.id, legs };
  }

  /** Reversing a posted transfer: its posted legs, debit and credit swapped. */
  private planReversal(input: Extract<TransferInput, { kind: "reversal" }>, base: PlannedBase): TransferRecord {
    const original = this.transfers.get(input.reversesId);
    if (!original) throw new LedgerError("transfer_not_found", `transfer ${input.reversesId} does not exist`);
    if (original.kind !== "standard" && original.kind !== "post_pending") {
      throw new LedgerError("not_reversible", `a ${original.kind} transfer cannot be reversed${original.kind === "pending" ? "; void it instead" : ""}`);
    }
    if (this.reversed.has(original.id)) throw new LedgerError("already_reversed", `transfer ${original.id} was already reversed`);
    if (input.effectiveAt !== undefined) notBefore(input.effectiveAt, original, "reverses");
    const legs = original.legs
      .filter((leg) => leg.postedAmount > 0n)
      .map((leg) => ({
        debitAccountId: leg.creditAccountId,
        creditAccountId: leg.debitAccountId,
        assetId: leg.assetId,
        postedAmount: leg.postedAmount,
        pendingAmount: 0n,
      }));
    if (legs.length === 0) throw new LedgerError("not_reversible", `transfer ${original.id} posted nothing`);
    // A correction belongs to the period of what it corrects (docs/ledger.md, "Where a
    // correction lands"): unless told otherwise it takes the original's effective time.
    return { ...base, effectiveAt: input.effectiveAt ?? original.effectiveAt, reversesId: original.id, legs };
  }

  private legAsset(debitId: string, creditId: string, i: number): string {
    const debit = this.accounts.get(debitId);
    if (!debit)
      throw new LedgerError("account_not_found", `account ${debitId} does not exist`, [{ path: `legs.${i}.debitAccountId`, message: "does not exist" }]);
    const credit = this.accounts.get(creditId);
    if (!credit)
      throw new LedgerError("account_not_found", `account ${creditId} does not exist`, [{ path: `legs.${i}.creditAccountId`, message: "does not exist" }]);
    if (debit.assetId !== credit.assetId) {
      throw new LedgerError("asset_mismatch", `leg ${i} moves between accounts of different assets`, [
        { path: `legs.${i}`, message: "debit and credit accounts hold different assets" },
      ]);
    }
    return debit.assetId;
  }

  private openPending(pendingId: string, kind: TransferKind): TransferRecord {
    const pending = this.transfers.get(pendingId);
    if (!pending) throw new LedgerError("pending_not_found", `pending transfer ${pendingId} does not exist`);
    if (pending.kind !== "pending") throw new LedgerError("not_pending", `transfer ${pendingId} is not a pending transfer`);
    const resolution = this.resolutions.get(pendingId);
    if (resolution === "post_pending") throw new LedgerError("pending_already_posted", `pending transfer ${pendingId} was already posted`);
    if (resolution === "void_pending") throw new LedgerError("pending_already_voided", `pending transfer ${pendingId} was already voided`);
    const timedOut = pending.timeoutAt !== null && pending.timeoutAt.getTime() <= this.now.getTime();
    if (resolution === "expire_pending" || (timedOut && kind !== "expire_pending")) {
      throw new LedgerError("pending_expired", `pending transfer ${pendingId} expired`);
    }
    if (kind === "expire_pending" && !timedOut) {
      throw new LedgerError("invalid_request", `pending transfer ${pendingId} has not reached its timeout`);
    }
    return pending;
  }

  /** Applies the legs to the balances, all or nothing, and returns the entries with running balances. */
  private apply(transfer: TransferRecord): EntryRecord[] {
    const next = new Map<string, Balances>();
    const balancesOf = (id: string) => {
      let b = next.get(id);
      if (!b) {
        b = { ...this.accounts.get(id)!.balances };
        next.set(id, b);
      }
      return b;
    };
    const entries: EntryRecord[] = [];
    transfer.legs.forEach((leg, i) => {
      const debit = balancesOf(leg.debitAccountId);
      debit.debitsPosted += leg.postedAmount;
      debit.debitsPending += leg.pendingAmount;
      const credit = balancesOf(leg.creditAccountId);
      credit.creditsPosted += leg.postedAmount;
      credit.creditsPending += leg.pendingAmount;
      for (const [side, accountId, b] of [
        ["debit", leg.debitAccountId, debit],
        ["credit", leg.creditAccountId, credit],
      ] as const) {
        entries.push({
          transferId: transfer.id,
          leg: i,
          accountId,
          assetId: leg.assetId,
          side,
          postedAmount: leg.postedAmount,
          pendingAmount: leg.pendingAmount,
          balanceAfter: postedBalance(this.accounts.get(accountId)!.normalSide, b),
          effectiveAt: transfer.effectiveAt,
        });
      }
    });
    for (const [id, b] of next) {
      if (b.debitsPosted > UINT256_MAX || b.creditsPosted > UINT256_MAX || b.debitsPending > UINT256_MAX || b.creditsPending > UINT256_MAX) {
        throw new LedgerError("overflow", `a balance of account ${id} would exceed 2^256 - 1`);
      }
      if (b.debitsPending < 0n || b.creditsPending < 0n) {
        throw new Error(`ledger bug: negative pending balance on account ${id}`);
      }
      const broken = brokenLimit(this.accounts.get(id)!, b);
      if (broken !== undefined) throw this.limitRefusal(broken, id, b);
    }
    for (const [id, b] of next) this.accounts.get(id)!.balances = b;
    return entries;
  }

  /**
   * Insufficient funds (or its mirror) with the figures to act on, in the asset's smallest unit:
   * what the account has available now, what this transfer takes, and how much is missing.
   */
  private limitRefusal(broken: "exceeds_credits" | "exceeds_debits", id: string, after: Balances): LedgerError {
    const a = this.accounts.get(id)!;
    const before = a.balances;
    const limit = a.overdraftLimit ?? 0n;
    if (broken === "exceeds_credits") {
      const available = before.creditsPosted + limit - before.debitsPosted - before.debitsPending;
      const takes = after.debitsPosted + after.debitsPending - (before.debitsPosted + before.debitsPending) - (after.creditsPosted - before.creditsPosted);
      const missing = after.debitsPosted + after.debitsPending - after.creditsPosted - limit;
      return new LedgerError(
        broken,
        `insufficient funds on account ${id}: ${available} available, this transfer takes ${takes}, ${missing} short (amounts in the asset's smallest unit)`,
      );
    }
    const available = before.debitsPosted - before.creditsPosted - before.creditsPending;
    const missing = after.creditsPosted + after.creditsPending - after.debitsPosted;
    return new LedgerError(
      broken,
      `account ${id} would have more credits than debits: ${available} of debits left to credit against, ${missing} short (amounts in the asset's smallest unit)`,
    );
  }
}

/**
 * A transfer that acts on an earlier one (its reversal, the post of a hold) is not effective before
 * it: as of any instant, a balance shows either both or neither (a no-overdraft account would
 * otherwise read negative in between).
 */
function notBefore(at: Date, original: TransferRecord, verb: string): void {
  if (at.getTime() < original.effectiveAt.getTime()) {
    throw new LedgerError(
      "invalid_request",
      `the effective time ${at.toISOString()} is before that of transfer ${original.id} it ${verb} (${original.effectiveAt.toISOString()})`,
      [{ path: "effectiveAt", message: `is before the effective time of the transfer it ${verb}` }],
    );
  }
}

export type TransferStatus = "posted" | "pending" | "voided" | "expired" | "reversed";

/** A transfer as callers see it. */
export interface Transfer extends TransferRecord {
  createdAt: Date;
  /**
   * posted (standard, post, reversal), pending (a hold not yet resolved), voided or expired
   * (pending resolved without posting; void/expire transfers themselves also show this), or reversed
   * (a posted transfer that a later reversal undid).
   */
  status: TransferStatus;
}

export function statusOf(kind: TransferKind, resolution: TransferKind | null, reversed: boolean): TransferStatus {
  switch (kind) {
    case "pending":
      return resolution === "post_pending" ? "posted" : resolution === "void_pending" ? "voided" : resolution === "expire_pending" ? "expired" : "pending";
    case "void_pending":
      return "voided";
    case "expire_pending":
      return "expired";
    default:
      return reversed ? "reversed" : "posted";
  }
}
