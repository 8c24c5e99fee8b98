import type { Account, AccountBalance, Entry } from "../domain/accounts.js";
import type { ApiKey } from "../domain/access.js";
import type { Asset } from "../domain/assets.js";
import type { Transfer } from "../domain/posting.js";
import { display } from "./display.js";

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

export const entryOut = (e: Entry) => ({
  id: e.id,
  transfer_id: e.transferId,
  leg: e.leg,
  side: e.side,
  posted_amount: e.postedAmount.toString(),
  pending_amount: e.pendingAmount.toString(),
  balance_after: e.balanceAfter.toString(),
  effective_at: e.effectiveAt.toISOString(),
  created_at: e.createdAt.toISOString(),
});

export const transferOut = (t: Transfer) => ({
  id: t.id,
  type: t.kind,
  status: t.status,
  pending_id: t.pendingId,
  reverses_id: t.reversesId,
  timeout_at: t.timeoutAt?.toISOString() ?? null,
  effective_at: t.effectiveAt.toISOString(),
  created_at: t.createdAt.toISOString(),
  metadata: t.metadata,
  legs: t.legs.map((l) => ({
    debit_account_id: l.debitAccountId,
    credit_account_id: l.creditAccountId,
    asset_id: l.assetId,
    amount: (l.postedAmount > 0n ? l.postedAmount : l.pendingAmount < 0n ? -l.pendingAmount : l.pendingAmount).toString(),
    posted_amount: l.postedAmount.toString(),
    pending_amount: l.pendingAmount.toString(),
  })),
});

export const apiKeyOut = (k: ApiKey) => ({
  id: k.id,
  prefix: k.prefix,
  name: k.name,
  role: k.role,
  scope_id: k.scopeId,
  created_at: k.createdAt.toISOString(),
  revoked_at: k.revokedAt?.toISOString() ?? null,
});
