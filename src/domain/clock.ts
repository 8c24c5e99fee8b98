/**
 * Where the service reads the time of day. Every instant that a rule or a report depends on — an
 * effective time, a booking time, "in the future", an expiry, a payout schedule's window — comes from
 * the clock of the database handle it runs against (`db.clock`) and is passed into SQL as a
 * parameter, never taken from PostgreSQL's `now()`. The database's own time is kept only for row
 * bookkeeping that no rule reads (`updated_at`) and for elapsed durations (docs/architecture.md).
 */
export interface Clock {
  now(): Date;
}

/**
 * How far ahead of the service's clock an instant a client tells may be (clock skew between the
 * client and the service): a usage record's period end, a transfer's effective time, a rate's
 * observation (a feed's or one finance proposes).
 */
export const FUTURE_TOLERANCE_MS = 5 * 60_000;

/** The machine's time. */
export const systemClock: Clock = { now: () => new Date() };

/**
 * A clock that reads `start` when it is made and runs on in real time from there: the whole service
 * as it would behave at another instant (CLOCK_START), with time still passing for timeouts.
 */
export function clockStartingAt(start: Date, real: () => number = Date.now): Clock {
  if (Number.isNaN(start.getTime())) throw new Error("the clock's start must be a valid instant");
  const offset = start.getTime() - real();
  return { now: () => new Date(real() + offset) };
}

/** A clock that moves only when told: for tests that step through time. */
export class ManualClock implements Clock {
  private at: number;
  constructor(at: Date) {
    this.at = at.getTime();
  }
  now(): Date {
    return new Date(this.at);
  }
  set(at: Date): void {
    this.at = at.getTime();
  }
  advance(ms: number): void {
    this.at += ms;
  }
}
