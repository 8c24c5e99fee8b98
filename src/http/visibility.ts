import type { Context } from "hono";
import { getAccount, getAccounts, type Account } from "../db/queries/accounts.js";
import { getTransfer, type Transfer } from "../db/queries/transfers.js";
import { canSeeAccount, canUseAccount } from "../services/principal.js";
import type { AppEnv } from "./env.js";
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

/** A transfer is visible to a key that can see any account it touches. */
export async function visibleTransfer(c: Context<AppEnv>, id: string): Promise<Transfer> {
  const db = c.get("deps").ledger.db;
  const transfer = await getTransfer(db, id);
  const principal = c.get("principal");
  if (transfer && (principal.role === "admin" || principal.role === "finance")) return transfer;
  if (transfer) {
    const accounts = await getAccounts(db, [...new Set(transfer.legs.flatMap((l) => [l.debitAccountId, l.creditAccountId]))]);
    if (accounts.some((a) => canSeeAccount(principal, a))) return transfer;
  }
  throw new ApiError("transfer_not_found", `transfer ${id} does not exist`);
}

/**
 * The ids among `ids` that this key may not move money on (unknown ones included). Admin keys may
 * use any account: the ledger itself reports unknown ones.
 */
export async function unusableAccounts(c: Context<AppEnv>, ids: string[]): Promise<Set<string>> {
  const principal = c.get("principal");
  if (principal.role === "admin") return new Set();
  const usable = new Set((await getAccounts(c.get("deps").ledger.db, [...new Set(ids)])).filter((a) => canUseAccount(principal, a)).map((a) => a.id));
  return new Set(ids.filter((id) => !usable.has(id)));
}
