import type { Context } from "hono";
import type { TransferInput } from "../domain/transfers.js";
import type { AppEnv } from "./request-context.js";
import { LedgerError } from "../domain/errors.js";
import { bookingOnAccounts } from "../services/periods.js";
import { ApiError } from "./problem.js";
import { assetScales } from "./scales.js";
import { submitTransfer } from "./submit-transfers.js";
import { unusableAccounts, visibleTransfer } from "./visibility.js";

type Action = Extract<TransferInput, { kind: "post_pending" | "void_pending" | "reversal" }>;
type Unkeyed = Action extends infer T ? (T extends Action ? Omit<T, "idempotencyKey"> : never) : never;

/**
 * Posting, voiding or reversing an earlier transfer: the caller must see that transfer and be
 * allowed to move money on every account it touches; otherwise it does not exist for them.
 */
export async function actOnTransfer(c: Context<AppEnv>, id: string, body: unknown, input: Unkeyed): Promise<Response> {
  const target = await visibleTransfer(c, id);
  // Payouts and chain deposits own their transfers: voiding a payout's hold here while the worker
  // pays it on chain would let the operator be paid twice.
  const owner = ["payout", "chain_deposit", "chain_tx", "receipt", "reconciliation"].find((k) => target.metadata && k in target.metadata);
  if (owner !== undefined) {
    throw new ApiError(
      "invalid_request",
      `transfer ${id} belongs to a ${owner.replace("_", " ")}; act on it through its own routes (e.g. POST /v1/payouts/{id}/cancel)`,
    );
  }
  // Usage owns its transfer too: its reversal refunds a closed hold into the customer's balance.
  // (A marketplace key is told first that the accounts are the service's; an admin, that the
  // transfer is a usage record's.)
  if (target.metadata && "usage" in target.metadata && c.get("principal").role === "admin") {
    throw new ApiError("invalid_request", `transfer ${id} belongs to a usage record; correct it with POST /v1/usage/{id}/reverse`);
  }
  const unusable = await unusableAccounts(
    c,
    target.legs.flatMap((l) => [l.debitAccountId, l.creditAccountId]),
  );
  // Visible but touching accounts this key may not move money on (e.g. an operator's payable, or
  // the service's own accounts of its marketplace): saying so leaks nothing, since the key can read the transfer.
  if (unusable.size > 0) {
    const reserved = [...unusable.values()].flatMap((u) => (u.reason === "reserved" ? [u.account.ref] : []));
    throw new ApiError(
      "forbidden",
      [...unusable.values()].every((u) => u.reason === "reserved")
        ? `transfer ${id} moves money on the service's own accounts (${reserved.join(", ")}), which only the service's routes move; correct usage with POST /v1/usage/{id}/reverse`
        : `transfer ${id} touches accounts outside your marketplace; correct usage with POST /v1/usage/{id}/reverse`,
    );
  }
  if (target.metadata && "usage" in target.metadata) {
    throw new ApiError("invalid_request", `transfer ${id} belongs to a usage record; correct it with POST /v1/usage/{id}/reverse`);
  }
  const dated = await datedByPeriods(c, target, input);
  // The new transfer moves money in the assets of the one it acts on.
  const scales = await assetScales(
    c.get("deps").ledger.db,
    target.legs.map((l) => l.assetId),
  );
  // Judged again in the write's transaction, under the marketplaces' funding locks.
  const accounts = target.legs.flatMap((l) => [l.debitAccountId, l.creditAccountId]);
  const datedBy =
    input.kind === "reversal"
      ? { accounts, at: input.effectiveAt ?? target.effectiveAt, explicit: input.effectiveAt !== undefined }
      : input.kind === "post_pending" && input.effectiveAt !== undefined
        ? { accounts, at: input.effectiveAt, explicit: true }
        : undefined;
  return submitTransfer(c, body, dated, { scales, complete: true }, datedBy);
}

/**
 * The accounting periods of the transfer's marketplaces (docs/reconciliation.md, "Month-end
 * close"): an explicit effective time inside a closed period is refused; a reversal without one
 * (effective when the original was) of a closed period's transfer is booked at the start of the
 * first period after it that is not closed, naming the period it belongs to.
 */
async function datedByPeriods(
  c: Context<AppEnv>,
  target: { legs: { debitAccountId: string; creditAccountId: string }[]; effectiveAt: Date },
  input: Unkeyed,
): Promise<Unkeyed> {
  if (input.kind === "void_pending") return input;
  const explicit = input.effectiveAt !== undefined;
  if (input.kind === "post_pending" && !explicit) return input;
  const accounts = target.legs.flatMap((l) => [l.debitAccountId, l.creditAccountId]);
  const at = input.effectiveAt ?? target.effectiveAt;
  const booking = await bookingOnAccounts(c.get("deps").ledger.db, accounts, at, explicit).catch((err: unknown) => {
    throw err instanceof LedgerError ? ApiError.from(err) : err;
  });
  if (!booking.late) return input;
  const lateFor = { period: booking.late.period, effective_at: booking.late.effectiveAt.toISOString() };
  return { ...input, effectiveAt: booking.effectiveAt, metadata: { ...(input.metadata ?? {}), late_for: lateFor } };
}

export const optionalDate = (text: string | undefined) => (text === undefined ? undefined : new Date(text));
