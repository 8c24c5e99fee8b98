import { LedgerError } from "./errors.js";
import type { PeriodStatus } from "./periods.js";

/** A marketplace's period that is not open, as posting judges effective times against it. */
export interface LockedPeriod {
  period: string;
  startsAt: Date;
  endsAt: Date;
  status: Exclude<PeriodStatus, "open">;
}

/** Where something effective at `at` is booked (docs/reconciliation.md, "Month-end close"). */
export type Booking = { effectiveAt: Date; late: null } | { effectiveAt: Date; late: { period: string; effectiveAt: Date } };

/**
 * The effective time something meant for `at` is booked at, given the marketplace's periods that
 * are not open:
 *   - in an open period: at `at` itself;
 *   - in a closed period: at the start of the first period after it that is not closed (a closed
 *     period's report never changes), with a reference to the period and instant it belongs to.
 *     The instant is the same for every retry of one request, so a retry replays;
 *   - in a closing period (directly or after skipping closed ones): refused, `period_closing`.
 */
export function bookedEffective(marketplaceId: string, periods: LockedPeriod[], at: Date, what = "usage"): Booking {
  let cur = at;
  let first: LockedPeriod | null = null;
  for (let hops = 0; hops <= periods.length; hops++) {
    const p = periods.find((x) => x.startsAt.getTime() <= cur.getTime() && cur.getTime() < x.endsAt.getTime());
    if (!p) break;
    if (p.status === "closing") {
      throw new LedgerError(
        "period_closing",
        `the period ${p.period} of marketplace ${marketplaceId} is being closed: ${what} effective ${cur.toISOString()} cannot be posted into it now`,
      );
    }
    first ??= p;
    cur = p.endsAt;
  }
  return first === null ? { effectiveAt: at, late: null } : { effectiveAt: cur, late: { period: first.period, effectiveAt: at } };
}
