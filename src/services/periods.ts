import type { Queryable } from "../db/client.js";
import { lockMarketplaceFundingExclusive } from "../db/queries/funding.js";
import {
  getPeriodRow,
  listPeriodRows,
  marketplacesOfAccounts,
  allLockedPeriods,
  lockedPeriods,
  marketplaceTimeZone,
  setMarketplaceTimeZone,
  setPeriodStatus,
  type PeriodRow,
} from "../db/queries/periods.js";
import type { Principal } from "../domain/access.js";
import { LedgerError } from "../domain/errors.js";
import { bookedEffective, type Booking, type LockedPeriod } from "../domain/period-rules.js";
import { isPeriod, isTimeZone, periodBounds, periodOf, type PeriodStatus } from "../domain/periods.js";
import { mayPropose, openOrInsert, type Proposal } from "./proposals/proposal.js";
import { inTransaction } from "./transaction.js";

/**
 * Accounting periods (docs/reconciliation.md, "Month-end close"): months in the marketplace's time
 * zone. A month is open until finance starts closing it (`closing`: nothing new is back-dated into
 * it, corrections wait or go through a dispute); closing → closed and closed → open are proposals a
 * second key approves; closing → open is one finance key's word (it only lifts a restriction).
 * After close, nothing posts with an effective time inside the month: late records and corrections
 * are booked at the start of the first period after it that is not closed, naming what they belong to.
 */

export interface Period {
  marketplaceId: string;
  period: string;
  timeZone: string;
  startsAt: Date;
  endsAt: Date;
  status: PeriodStatus;
  changedBy: string | null;
  changedAt: Date | null;
  proposalId: string | null;
}

const toLocked = (r: PeriodRow): LockedPeriod => ({
  period: r.period,
  startsAt: new Date(r.starts_at),
  endsAt: new Date(r.ends_at),
  status: r.status as LockedPeriod["status"],
});

/**
 * For a ledger transfer on these accounts meant to be effective at `at`: where it is booked, judged
 * against the periods of every marketplace the accounts belong to — or, for a transfer on the
 * platform's own accounts only (none belongs to a marketplace), of every marketplace: the platform's
 * reports count those accounts in every month, so a month every marketplace closed stays closed for
 * them too. The latest instant any of them asks for, judged again against all of them until none
 * moves it (an instant one marketplace moves it to may lie in a period another closed). With
 * `explicit` (the caller named the instant), an instant inside a closed period is refused
 * `period_closed` instead of moved. A period being closed refuses it (`period_closing`).
 */
export async function bookingOnAccounts(db: Queryable, accountIds: string[], at: Date, explicit: boolean): Promise<Booking> {
  const owners = await marketplacesOfAccounts(db, accountIds);
  const rows = owners.length > 0 ? await lockedPeriods(db, owners) : await allLockedPeriods(db);
  const periodsOf = new Map<string, LockedPeriod[]>();
  for (const r of rows) periodsOf.set(r.marketplace_id, [...(periodsOf.get(r.marketplace_id) ?? []), toLocked(r)]);
  let booking: Booking = { effectiveAt: at, late: null };
  for (let moved = true, rounds = 0; moved; rounds++) {
    if (rounds > rows.length + 1) throw new Error("ledger bug: a transfer's booking did not settle");
    moved = false;
    for (const [m, periods] of periodsOf) {
      const b = bookedEffective(m, periods, booking.effectiveAt, "a transfer");
      if (b.late && explicit) {
        throw new LedgerError("period_closed", `the period ${b.late.period} of marketplace ${m} is closed: nothing posts effective ${at.toISOString()}`);
      }
      if (b.effectiveAt.getTime() > booking.effectiveAt.getTime()) {
        booking = { effectiveAt: b.effectiveAt, late: booking.late ?? b.late };
        moved = true;
      }
    }
  }
  return booking;
}

/**
 * Whether any planned usage record would now be booked differently (or refused) than it was
 * planned: read under the marketplaces' funding locks, after the planning's read of the periods.
 */
export async function bookingsChanged(
  tx: Queryable,
  planned: { item: { marketplaceId: string; input: { periodEnd: Date } }; booking: Booking }[],
): Promise<boolean> {
  const rows = await lockedPeriods(tx, [...new Set(planned.map((p) => p.item.marketplaceId))]);
  return planned.some((p) => {
    const periods = rows.filter((r) => r.marketplace_id === p.item.marketplaceId).map(toLocked);
    try {
      return bookedEffective(p.item.marketplaceId, periods, p.item.input.periodEnd).effectiveAt.getTime() !== p.booking.effectiveAt.getTime();
    } catch {
      return true; // now closing: refused when planned again
    }
  });
}

/** Where something of `marketplaceId` effective at `at` is booked (src/domain/period-rules.ts). */
export async function bookingOf(db: Queryable, marketplaceId: string, at: Date, what: string): Promise<Booking> {
  return bookedEffective(marketplaceId, (await lockedPeriods(db, [marketplaceId])).map(toLocked), at, what);
}

async function requireTimeZone(db: Queryable, marketplaceId: string): Promise<string> {
  const tz = await marketplaceTimeZone(db, marketplaceId);
  if (tz === undefined) throw new LedgerError("marketplace_not_found", `marketplace ${marketplaceId} does not exist`);
  return tz;
}

/** The time zone a report of one marketplace names its months in (404 when there is no such marketplace); UTC for a report of all of them. */
export async function reportTimeZone(db: Queryable, marketplaceId: string | undefined): Promise<string> {
  return marketplaceId === undefined ? "UTC" : requireTimeZone(db, marketplaceId);
}

function requirePeriod(period: string): void {
  if (!isPeriod(period)) {
    throw new LedgerError("invalid_request", `period ${period} is not a month: YYYY-MM`, [{ path: "period", message: "must be YYYY-MM (1970-01 .. 9998-12)" }]);
  }
}

const toPeriod = (marketplaceId: string, period: string, timeZone: string, row: PeriodRow | undefined): Period => ({
  marketplaceId,
  period,
  timeZone,
  ...periodBounds(period, timeZone),
  status: row?.status ?? "open",
  changedBy: row?.changed_by ?? null,
  changedAt: row ? new Date(row.changed_at) : null,
  proposalId: row?.proposal_id ?? null,
});

export async function getPeriod(db: Queryable, marketplaceId: string, period: string): Promise<Period> {
  requirePeriod(period);
  const tz = await requireTimeZone(db, marketplaceId);
  return toPeriod(marketplaceId, period, tz, await getPeriodRow(db, marketplaceId, period));
}

/** The current month and every month whose status was ever changed, newest first. */
export async function listPeriods(db: Queryable, marketplaceId: string, now: Date): Promise<Period[]> {
  const tz = await requireTimeZone(db, marketplaceId);
  const rows = await listPeriodRows(db, marketplaceId);
  const current = periodOf(now, tz);
  const out = rows.map((r) => toPeriod(marketplaceId, r.period, tz, r));
  if (!rows.some((r) => r.period === current)) out.unshift(toPeriod(marketplaceId, current, tz, undefined));
  return out.sort((a, b) => b.startsAt.getTime() - a.startsAt.getTime());
}

export type PeriodChange = { kind: "changed"; period: Period } | { kind: "proposed"; proposal: Proposal };

/**
 * Asks for a period's status to change (admin, finance): to `closing` (from open, once the month
 * has ended) or back to `open` (from closing) at once; to `closed` (from closing) or back to
 * `open` (from closed) by a proposal another key approves. Anything else: `period_transition`.
 */
export async function changePeriod(
  db: Queryable,
  { now, by, marketplaceId, period, status }: { now: Date; by: Principal; marketplaceId: string; period: string; status: PeriodStatus },
): Promise<PeriodChange> {
  const current = await getPeriod(db, marketplaceId, period);
  const refuse = (why: string) => new LedgerError("period_transition", `period ${period} of marketplace ${marketplaceId} is ${current.status}: ${why}`);
  if (status === "closed" || (status === "open" && current.status === "closed")) {
    const kind = status === "closed" ? "period_close" : "period_reopen";
    mayPropose(by, kind);
    if (status === "closed" && current.status !== "closing") throw refuse("only a period being closed (closing) can be closed");
    // `since`: when the period entered its status. A proposal is for that episode only: once the
    // period left it (closing → open → closing), approving the old proposal is refused as outdated.
    const payload = { marketplace_id: marketplaceId, period, from: current.status, to: status, since: current.changedAt?.toISOString() ?? null };
    return { kind: "proposed", proposal: await openOrInsert(db, now, by, kind, marketplaceId, payload) };
  }
  if (status === "closing" && current.status !== "open") throw refuse("only an open period can start closing");
  if (status === "closing" && current.endsAt.getTime() > now.getTime())
    throw new LedgerError(
      "period_transition",
      `period ${period} of marketplace ${marketplaceId} ends at ${current.endsAt.toISOString()}: it cannot be closing before then`,
    );
  if (status === "open" && current.status !== "closing") throw refuse("it is open already");
  return { kind: "changed", period: await setStatus(db, current, status, by.keyId, now, null) };
}

/** Sets the status, waiting for usage being written into the marketplace (its funding lock, exclusively). */
async function setStatus(db: Queryable, p: Period, status: PeriodStatus, by: string, at: Date, proposalId: string | null): Promise<Period> {
  return inTransaction(db, async (tx) => {
    await lockMarketplaceFundingExclusive(tx, p.marketplaceId);
    // The bounds were worked out in the time zone read before the lock; a change of time zone takes
    // the same lock (setTimeZone), so the zone read now is the one the period is stored in.
    const tz = await requireTimeZone(tx, p.marketplaceId);
    if (tz !== p.timeZone) {
      throw new LedgerError(
        "period_transition",
        `the time zone of marketplace ${p.marketplaceId} changed to ${tz} meanwhile: send the change of period ${p.period} again`,
      );
    }
    const row = await getPeriodRow(tx, p.marketplaceId, p.period, true);
    const was = row?.status ?? "open";
    if (was !== p.status) throw new LedgerError("proposal_outdated", `period ${p.period} of marketplace ${p.marketplaceId} is ${was} now, not ${p.status}`);
    await setPeriodStatus(tx, { marketplaceId: p.marketplaceId, period: p.period, startsAt: p.startsAt, endsAt: p.endsAt, status, by, at, proposalId });
    return { ...p, status, changedBy: by, changedAt: at, proposalId };
  });
}

/** Approving a `period_close` or `period_reopen` proposal: the period must still be as it was proposed. */
export async function applyPeriodChange(tx: Queryable, p: Proposal, at: Date): Promise<Record<string, unknown>> {
  const q = p.payload as { marketplace_id: string; period: string; from: PeriodStatus; to: PeriodStatus; since: string | null };
  const current = await getPeriod(tx, q.marketplace_id, q.period);
  if (current.status !== q.from || (current.changedAt?.toISOString() ?? null) !== q.since) {
    throw new LedgerError(
      "proposal_outdated",
      `period ${q.period} of marketplace ${q.marketplace_id} is ${current.status} since ${current.changedAt?.toISOString() ?? "ever"}, not ${q.from} since ${q.since ?? "ever"} as proposed: reject this proposal`,
    );
  }
  const done = await setStatus(tx, current, q.to, p.proposedBy, at, p.id);
  return { marketplace_id: done.marketplaceId, period: done.period, status: done.status };
}

/** Sets the time zone of a marketplace's periods (admin): refused once a period was ever closing or closed (its bounds would move). */
export async function setTimeZone(db: Queryable, { marketplaceId, timeZone }: { marketplaceId: string; timeZone: string }): Promise<string> {
  if (!isTimeZone(timeZone)) {
    throw new LedgerError("invalid_request", `time zone ${timeZone} is not one this service knows`, [
      { path: "time_zone", message: "must be an IANA time zone name such as UTC or Europe/Berlin" },
    ]);
  }
  await requireTimeZone(db, marketplaceId);
  return inTransaction(db, async (tx) => {
    // Under the lock a change of period status takes (setStatus): a month that starts closing
    // meanwhile is either stored before (and the zone is refused) or finds this zone.
    await lockMarketplaceFundingExclusive(tx, marketplaceId);
    if (!(await setMarketplaceTimeZone(tx, marketplaceId, timeZone))) {
      throw new LedgerError(
        "period_transition",
        `marketplace ${marketplaceId} has periods that were closing or closed: their bounds cannot move to another time zone`,
      );
    }
    return timeZone;
  });
}
