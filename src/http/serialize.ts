import type { Account, AccountBalance, Entry } from "../domain/accounts.js";
import type { ApiKey } from "../domain/access.js";
import type { Asset } from "../domain/assets.js";
import type { Transfer } from "../domain/posting.js";
import { display } from "./display.js";
import { scaleIn, type Scales } from "./scales.js";

/** Domain objects in the API's shape: snake_case fields, amounts as strings, times as RFC 3339. */

export const assetOut = (a: Asset) => ({
  id: a.id,
  code: a.code,
  scale: a.scale,
  settlement:
    a.settlement.kind === "erc20"
      ? { kind: a.settlement.kind, chain_id: a.settlement.chainId, token_address: a.settlement.tokenAddress }
      : a.settlement.kind === "native"
        ? { kind: a.settlement.kind, chain_id: a.settlement.chainId }
        : { kind: a.settlement.kind },
  created_at: a.createdAt.toISOString(),
  retired_at: a.retiredAt?.toISOString() ?? null,
  rate_max_age_seconds: a.rateBounds.maxAgeSeconds,
  rate_max_deviation_bps: a.rateBounds.maxDeviationBps,
});

export const accountOut = (a: Account) => ({
  id: a.id,
  asset_id: a.assetId,
  ref: a.ref,
  code: a.code,
  marketplace_id: a.marketplaceId,
  owner_type: a.ownerType,
  owner_id: a.ownerId,
  normal_side: a.normalSide,
  debits_must_not_exceed_credits: a.debitsMustNotExceedCredits,
  credits_must_not_exceed_debits: a.creditsMustNotExceedDebits,
  metadata: a.metadata,
  opened_by_service: a.openedByService,
  created_at: a.createdAt.toISOString(),
});

/** An account's balances, each amount with its display twin at the scale of the account's asset. */
export const balanceOut = (b: AccountBalance, asOf: Date | null, scale: number) => ({
  account_id: b.accountId,
  as_of: asOf?.toISOString() ?? null,
  posted: b.posted.toString(),
  posted_display: display(b.posted, scale),
  available: b.available.toString(),
  available_display: display(b.available, scale),
  debits_posted: b.debitsPosted.toString(),
  debits_posted_display: display(b.debitsPosted, scale),
  credits_posted: b.creditsPosted.toString(),
  credits_posted_display: display(b.creditsPosted, scale),
  debits_pending: b.debitsPending.toString(),
  debits_pending_display: display(b.debitsPending, scale),
  credits_pending: b.creditsPending.toString(),
  credits_pending_display: display(b.creditsPending, scale),
});

/** An entry, each amount with its display twin at the scale of the account's asset. */
export const entryOut = (e: Entry, scale: number) => ({
  id: e.id,
  transfer_id: e.transferId,
  leg: e.leg,
  side: e.side,
  posted_amount: e.postedAmount.toString(),
  posted_amount_display: display(e.postedAmount, scale),
  pending_amount: e.pendingAmount.toString(),
  pending_amount_display: display(e.pendingAmount, scale),
  balance_after: e.balanceAfter.toString(),
  balance_after_display: display(e.balanceAfter, scale),
  effective_at: e.effectiveAt.toISOString(),
  created_at: e.createdAt.toISOString(),
});

/** What a leg moved: its posted amount, or the pending amount of a hold, void or expiry. */
const legAmount = (l: Transfer["legs"][number]) => (l.postedAmount > 0n ? l.postedAmount : l.pendingAmount < 0n ? -l.pendingAmount : l.pendingAmount);

/** A transfer, each leg's amounts with their display twins at the scale of the leg's asset (`scales`, by asset id). */
export const transferOut = (t: Transfer, scales: Scales) => ({
  id: t.id,
  type: t.kind,
  status: t.status,
  pending_id: t.pendingId,
  reverses_id: t.reversesId,
  timeout_at: t.timeoutAt?.toISOString() ?? null,
  effective_at: t.effectiveAt.toISOString(),
  created_at: t.createdAt.toISOString(),
  metadata: t.metadata,
  legs: t.legs.map((l) => {
    const scale = scaleIn(scales, l.assetId);
    return {
      debit_account_id: l.debitAccountId,
      credit_account_id: l.creditAccountId,
      asset_id: l.assetId,
      amount: legAmount(l).toString(),
      amount_display: display(legAmount(l), scale),
      posted_amount: l.postedAmount.toString(),
      posted_amount_display: display(l.postedAmount, scale),
      pending_amount: l.pendingAmount.toString(),
      pending_amount_display: display(l.pendingAmount, scale),
    };
  }),
});

/** The asset ids of these transfers' legs: whose scales their answer needs. */
export const legAssets = (transfers: readonly Transfer[]) => new Set(transfers.flatMap((t) => t.legs.map((l) => l.assetId)));

export const apiKeyOut = (k: ApiKey) => ({
  id: k.id,
  prefix: k.prefix,
  name: k.name,
  role: k.role,
  scope_id: k.scopeId,
  created_at: k.createdAt.toISOString(),
  revoked_at: k.revokedAt?.toISOString() ?? null,
  created_by: k.createdBy,
});
