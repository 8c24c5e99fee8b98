import type { Queryable } from "../client.js";
import { pgArray } from "../sql-arrays.js";

/** Accounting periods (docs/reconciliation.md, "Month-end close"): only months that are not simply open have a row. */

export interface PeriodRow {
  marketplace_id: string;
  period: string;
  starts_at: Date | string;
  ends_at: Date | string;
  status: "open" | "closing" | "closed";
  changed_by: string;
  changed_at: Date | string;
  proposal_id: string | null;
}

const COLUMNS = "marketplace_id, period, starts_at, ends_at, status, changed_by, changed_at, proposal_id";

export async function getPeriodRow(db: Queryable, marketplaceId: string, period: string, forUpdate = false): Promise<PeriodRow | undefined> {
  const [row] = await db.query<PeriodRow>(
    `select ${COLUMNS} from accounting_periods where marketplace_id = $1 and period = $2${forUpdate ? " for update" : ""}`,
    [marketplaceId, period],
  );
  return row;
}

/** A marketplace's periods with a row (closing, closed, or reopened), newest first. */
export async function listPeriodRows(db: Queryable, marketplaceId: string): Promise<PeriodRow[]> {
  return db.query<PeriodRow>(`select ${COLUMNS} from accounting_periods where marketplace_id = $1 order by starts_at desc`, [marketplaceId]);
}

export async function setPeriodStatus(
  tx: Queryable,
  r: { marketplaceId: string; period: string; startsAt: Date; endsAt: Date; status: string; by: string; at: Date; proposalId: string | null },
): Promise<void> {
  await tx.query(
    `insert into accounting_periods (marketplace_id, period, starts_at, ends_at, status, changed_by, changed_at, proposal_id)
     values ($1, $2, $3, $4, $5, $6, $7, $8)
     on conflict (marketplace_id, period) do update set status = excluded.status, changed_by = excluded.changed_by,
       changed_at = excluded.changed_at, proposal_id = excluded.proposal_id`,
    [r.marketplaceId, r.period, r.startsAt.toISOString(), r.endsAt.toISOString(), r.status, r.by, r.at.toISOString(), r.proposalId],
  );
}

/** The closing and closed periods of these marketplaces (what posting effective times are judged against). */
export async function lockedPeriods(db: Queryable, marketplaceIds: string[]): Promise<PeriodRow[]> {
  if (marketplaceIds.length === 0) return [];
  return db.query<PeriodRow>(`select ${COLUMNS} from accounting_periods where marketplace_id = any($1::text[]) and status <> 'open'`, [
    pgArray(marketplaceIds),
  ]);
}

/** Every marketplace's periods that are not open (a transfer on the platform's own accounts only is judged against all of them). */
export async function allLockedPeriods(db: Queryable): Promise<PeriodRow[]> {
  return db.query<PeriodRow>(`select ${COLUMNS} from accounting_periods where status <> 'open'`);
}

/** Every marketplace's id. */
export async function allMarketplaceIds(db: Queryable): Promise<string[]> {
  return (await db.query<{ id: string }>("select id from marketplaces order by id")).map((r) => r.id);
}

/** The marketplace's time zone. */
export async function marketplaceTimeZone(db: Queryable, marketplaceId: string): Promise<string | undefined> {
  const [row] = await db.query<{ time_zone: string }>("select time_zone from marketplaces where id = $1", [marketplaceId]);
  return row?.time_zone;
}

/** Sets the time zone unless a period of the marketplace ever changed status (its bounds would move). Answers whether it was set. */
export async function setMarketplaceTimeZone(tx: Queryable, marketplaceId: string, tz: string): Promise<boolean> {
  const rows = await tx.query(
    `update marketplaces set time_zone = $2 where id = $1
        and not exists (select 1 from accounting_periods where marketplace_id = $1) returning id`,
    [marketplaceId, tz],
  );
  return rows.length === 1;
}

/** The marketplaces these accounts belong to (the platform's own accounts belong to none). */
export async function marketplacesOfAccounts(db: Queryable, accountIds: string[]): Promise<string[]> {
  if (accountIds.length === 0) return [];
  const rows = await db.query<{ m: string }>("select distinct marketplace_id as m from accounts where id = any($1::uuid[]) and marketplace_id is not null", [
    pgArray(accountIds),
  ]);
  return rows.map((r) => r.m);
}
