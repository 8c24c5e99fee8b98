import type { Account } from "../db/queries/accounts.js";

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
 * Whether a key may move money on an account (debit or credit it in a transfer). A marketplace moves
 * money only between accounts of its own that it opened: the service's accounts (its customers',
 * fee, hold and clearing accounts) move only through the service's own routes (usage, deposits,
 * holds), so that no tenant can credit a customer or a fee account by hand.
 */
export function canUseAccount(p: Principal, a: Pick<Account, "marketplaceId" | "openedByService">): boolean {
  return p.role === "admin" || (p.role === "marketplace" && a.marketplaceId === p.scopeId && !a.openedByService);
}
