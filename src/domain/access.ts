import type { Account } from "./accounts.js";

export const roles = ["admin", "finance", "marketplace", "operator"] as const;
export type Role = (typeof roles)[number];

/** Who is calling: the API key's role and, for marketplace and operator keys, whom it acts for. */
export interface Principal {
  keyId: string;
  role: Role;
  scopeId: string | null;
}

/** The tenant a key acts for; idempotency keys and visibility are per tenant. */
export function tenantOf(p: Principal): string {
  return p.scopeId === null ? p.role : `${p.role}:${p.scopeId}`;
}

/**
 * Whether a key may see an account. Admin and finance see everything; a marketplace key sees the
 * accounts of its marketplace; an operator key sees the accounts it owns.
 */
export function canSeeAccount(p: Principal, a: Pick<Account, "marketplaceId" | "ownerType" | "ownerId">): boolean {
  switch (p.role) {
    case "admin":
    case "finance":
      return true;
    case "marketplace":
      return a.marketplaceId === p.scopeId;
    case "operator":
      return a.ownerType === "operator" && a.ownerId === p.scopeId;
  }
}

/**
 * Whether a key may read a transfer, given every account it touches: admin and finance read any; a
 * marketplace or operator key one that touches an account it sees, unless the transfer touches the
 * accounts of two marketplaces (an admin's movement across tenants, for finance only: either
 * marketplace would read the other's account and amount). The events' rule is the same
 * (docs/api.md, "Whose events").
 */
export function canSeeTransfer(p: Principal, touched: Pick<Account, "marketplaceId" | "ownerType" | "ownerId">[]): boolean {
  if (p.role === "admin" || p.role === "finance") return true;
  if (new Set(touched.flatMap((a) => (a.marketplaceId === null ? [] : [a.marketplaceId]))).size > 1) return false;
  return touched.some((a) => canSeeAccount(p, a));
}

/** The accounts a key sees, as a filter that lists apply in SQL: every account (empty), one marketplace's, or one operator's own. */
export interface AccountScope {
  marketplaceId?: string;
  operatorId?: string;
}

/** canSeeAccount as an AccountScope: the two say the same, so that a list never shows what a read by id would hide. */
export function accountScope(p: Principal): AccountScope {
  switch (p.role) {
    case "admin":
    case "finance":
      return {};
    case "marketplace":
      return { marketplaceId: p.scopeId! };
    case "operator":
      return { operatorId: p.scopeId! };
  }
}

/**
 * Whether a key may move money on an account (debit or credit it in a transfer). Only accounts
 * opened through the API move by hand: an admin's across the books, a marketplace's of its own.
 * The service's accounts (customers', operators', fee, hold, clearing, treasury) move only through
 * the service's own routes, so that no key alone can credit a customer, an operator or a fee account.
 */
export function canUseAccount(p: Principal, a: Pick<Account, "marketplaceId" | "openedByService">): boolean {
  // Nobody moves the service's own accounts by hand, not even an admin: an operator's payable, a
  // customer's balance, the treasury or a fee account move only through the service's routes
  // (usage, deposits, payouts, receipts and adjustments that a second key approves).
  if (a.openedByService) return false;
  return p.role === "admin" || (p.role === "marketplace" && a.marketplaceId === p.scopeId);
}

export interface ApiKey {
  id: string;
  prefix: string;
  name: string;
  role: Role;
  scopeId: string | null;
  createdAt: Date;
  revokedAt: Date | null;
  /** The key that created this one ("bootstrap-admin" for the key from ADMIN_API_KEY); null if not recorded. */
  createdBy: string | null;
}

/** "a" or "an" before a word, as it is spoken ("an admin key", "a marketplace key", "an operator key", "a usage limit"). */
export function withArticle(word: string): string {
  const vowelSound = /^[aeiou]/i.test(word) && !/^(u[b-df-hj-np-tv-z][aeiou]|eu)/i.test(word);
  return `${vowelSound ? "an" : "a"} ${word}`;
}
