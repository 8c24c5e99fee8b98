import { canSeeAccount, type Principal } from "../domain/access.js";
import { LedgerError } from "../domain/errors.js";
import { eventScope } from "../domain/events.js";
import { uuidv7 } from "../domain/ids.js";
import { getAccount } from "../db/queries/accounts.js";
import {
  deleteBalanceMonitorRow,
  getBalanceMonitorRow,
  insertBalanceMonitor,
  listBalanceMonitorRows,
  type BalanceMonitorRow,
} from "../db/queries/balance-monitors.js";
import type { Queryable } from "./context.js";

export type { BalanceMonitorRow } from "../db/queries/balance-monitors.js";

export interface BalanceMonitorInput {
  accountId: string;
  direction: "below" | "above";
  balance: "posted" | "available";
  threshold: bigint;
  hysteresis: bigint;
}

/**
 * Sets a threshold on a balance the key may read (docs/api.md, "Balance monitors"): a marketplace
 * key on its marketplace's accounts (its customers', its fees), an operator key on its own, admin
 * and finance on any. The monitor belongs to the key's tenant and starts `ok`; the event relay
 * evaluates it from its next step on, so a balance already past the threshold fires at once.
 */
export async function createBalanceMonitor(tx: Queryable, input: BalanceMonitorInput & { principal: Principal; now: Date }): Promise<BalanceMonitorRow> {
  const account = await getAccount(tx, input.accountId);
  if (!account || !canSeeAccount(input.principal, account))
    throw new LedgerError("account_not_found", `account ${input.accountId} does not exist`, [{ path: "account_id", message: "does not exist" }]);
  const scope = eventScope(input.principal);
  const id = uuidv7(input.now.getTime());
  await insertBalanceMonitor(tx, {
    id,
    marketplaceId: scope.marketplaceId ?? null,
    operatorId: scope.operatorId ?? null,
    accountId: input.accountId,
    direction: input.direction,
    balance: input.balance,
    threshold: input.threshold,
    hysteresis: input.hysteresis,
    createdBy: input.principal.keyId,
    createdAt: input.now,
  });
  return (await getBalanceMonitorRow(tx, id, {}))!;
}

/** A monitor the key may see (its tenant's; admin and finance: any), or balance_monitor_not_found. */
export async function visibleBalanceMonitor(db: Queryable, principal: Principal, id: string): Promise<BalanceMonitorRow> {
  const row = await getBalanceMonitorRow(db, id, eventScope(principal));
  if (!row) throw new LedgerError("balance_monitor_not_found", `balance monitor ${id} does not exist`);
  return row;
}

export async function listBalanceMonitors(
  db: Queryable,
  principal: Principal,
  q: { accountId?: string; afterId?: string; limit: number },
): Promise<BalanceMonitorRow[]> {
  return listBalanceMonitorRows(db, { ...q, ...eventScope(principal) });
}

/** Deletes a monitor the key may see; returns it as it was. No event follows. */
export async function deleteBalanceMonitor(tx: Queryable, principal: Principal, id: string): Promise<BalanceMonitorRow> {
  const row = await visibleBalanceMonitor(tx, principal, id);
  await deleteBalanceMonitorRow(tx, id);
  return row;
}
