import { and, asc, eq, gt, type SQL } from "drizzle-orm";
import type { Queryable } from "../client.js";
import { orm, run } from "../orm.js";
import { accounts, balanceMonitors } from "../schema/index.js";

export type BalanceMonitorRow = {
  id: string;
  marketplace_id: string | null;
  operator_id: string | null;
  account_id: string;
  asset_id: string;
  direction: "below" | "above";
  balance: "posted" | "available";
  threshold: string;
  hysteresis: string;
  state: "ok" | "crossed";
  last_balance: string | null;
  changed_at: Date | null;
  created_by: string;
  created_at: Date;
};

const columns = {
  id: balanceMonitors.id,
  marketplace_id: balanceMonitors.marketplaceId,
  operator_id: balanceMonitors.operatorId,
  account_id: balanceMonitors.accountId,
  asset_id: accounts.assetId,
  direction: balanceMonitors.direction,
  balance: balanceMonitors.balance,
  threshold: balanceMonitors.threshold,
  hysteresis: balanceMonitors.hysteresis,
  state: balanceMonitors.state,
  last_balance: balanceMonitors.lastBalance,
  changed_at: balanceMonitors.changedAt,
  created_by: balanceMonitors.createdBy,
  created_at: balanceMonitors.createdAt,
};

const asDate = (v: unknown) => (v === null ? null : v instanceof Date ? v : new Date(v as string));
const toRow = (r: Record<string, unknown>): BalanceMonitorRow => ({
  ...(r as BalanceMonitorRow),
  changed_at: asDate(r.changed_at),
  created_at: asDate(r.created_at)!,
});

export interface MonitorScope {
  marketplaceId?: string;
  operatorId?: string;
}

const scoped = (s: MonitorScope): (SQL | undefined)[] => [
  s.marketplaceId === undefined ? undefined : eq(balanceMonitors.marketplaceId, s.marketplaceId),
  s.operatorId === undefined ? undefined : eq(balanceMonitors.operatorId, s.operatorId),
];

export async function insertBalanceMonitor(
  tx: Queryable,
  m: {
    id: string;
    marketplaceId: string | null;
    operatorId: string | null;
    accountId: string;
    direction: string;
    balance: string;
    threshold: bigint;
    hysteresis: bigint;
    createdBy: string;
    createdAt: Date;
  },
): Promise<void> {
  await run(
    orm(tx)
      .insert(balanceMonitors)
      .values({ ...m, threshold: m.threshold.toString(), hysteresis: m.hysteresis.toString(), state: "ok" }),
  );
}

/** A monitor by id, if the scope covers it. */
export async function getBalanceMonitorRow(db: Queryable, id: string, scope: MonitorScope): Promise<BalanceMonitorRow | undefined> {
  const rows = await run(
    orm(db)
      .select(columns)
      .from(balanceMonitors)
      .innerJoin(accounts, eq(accounts.id, balanceMonitors.accountId))
      .where(and(eq(balanceMonitors.id, id), ...scoped(scope))),
  );
  return rows[0] ? toRow(rows[0]) : undefined;
}

/** A page of monitors by id, within a scope. */
export async function listBalanceMonitorRows(
  db: Queryable,
  f: MonitorScope & { accountId?: string; afterId?: string; limit: number },
): Promise<BalanceMonitorRow[]> {
  const rows = await run(
    orm(db)
      .select(columns)
      .from(balanceMonitors)
      .innerJoin(accounts, eq(accounts.id, balanceMonitors.accountId))
      .where(
        and(
          ...scoped(f),
          f.accountId === undefined ? undefined : eq(balanceMonitors.accountId, f.accountId),
          f.afterId === undefined ? undefined : gt(balanceMonitors.id, f.afterId),
        ),
      )
      .orderBy(asc(balanceMonitors.id))
      .limit(f.limit),
  );
  return rows.map(toRow);
}

export async function deleteBalanceMonitorRow(tx: Queryable, id: string): Promise<void> {
  await run(orm(tx).delete(balanceMonitors).where(eq(balanceMonitors.id, id)));
}
