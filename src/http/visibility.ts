import type { Context } from "hono";
import { getAccount, getAccounts, getTransfer } from "../services/reads.js";
import { type Account } from "../domain/accounts.js";
import { type Transfer } from "../domain/posting.js";
import { canSeeAccount, canSeeTransfer, canUseAccount } from "../domain/access.js";
import type { AppEnv } from "./request-context.js";
import { ApiError } from "./problem.js";

/**
 * Tenancy checks. Another tenant's resource answers exactly like a missing one (404), so that ids
 * cannot be probed.
 */
export async function visibleAccount(c: Context<AppEnv>, id: string): Promise<Account> {
  const account = await getAccount(c.get("deps").ledger.db, id);
  if (!account || !canSeeAccount(c.get("principal"), account)) throw new ApiError("account_not_found", `account ${id} does not exist`);
  return account;
}

/** A transfer is visible to a key that can see any account it touches, unless it spans two marketplaces (canSeeTransfer). */
export async function visibleTransfer(c: Context<AppEnv>, id: string): Promise<Transfer> {
  const db = c.get("deps").ledger.db;
  const transfer = await getTransfer(db, id);
  const principal = c.get("principal");
  if (transfer && (principal.role === "admin" || principal.role === "finance")) return transfer;
  if (transfer) {
    const accounts = await getAccounts(db, [...new Set(transfer.legs.flatMap((l) => [l.debitAccountId, l.creditAccountId]))]);
    if (canSeeTransfer(principal, accounts)) return transfer;
  }
  throw new ApiError("transfer_not_found", `transfer ${id} does not exist`);
}

/**
 * The ids among `ids` that this key may not move money on (unknown ones included), with what the key
 * may be told of each: `hidden` (it may not see the account: answer as for a missing one) or
 * `reserved` (it sees the account, which is one of the service's own). Admin keys may use any
 * account opened through the API, none of the service's own; the ledger itself reports unknown ones.
 */
export async function unusableAccounts(
  c: Context<AppEnv>,
  ids: string[],
): Promise<Map<string, { reason: "hidden" } | { reason: "reserved"; account: Account }>> {
  const principal = c.get("principal");
  const out = new Map<string, { reason: "hidden" } | { reason: "reserved"; account: Account }>();
  const accounts = new Map((await getAccounts(c.get("deps").ledger.db, [...new Set(ids)])).map((a) => [a.id, a]));
  for (const id of ids) {
    const a = accounts.get(id);
    if (a && canUseAccount(principal, a)) continue;
    if (!a && principal.role === "admin") continue; // the ledger reports unknown accounts to an admin
    out.set(id, a && canSeeAccount(principal, a) && a.openedByService ? { reason: "reserved", account: a } : { reason: "hidden" });
  }
  return out;
}
