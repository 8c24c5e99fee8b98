import { clockStartingAt, systemClock, type Clock } from "../../src/domain/clock.js";

const startClock = (): Clock => (process.env.CLOCK_START ? clockStartingAt(new Date(process.env.CLOCK_START)) : systemClock);
let current = startClock();

/**
 * The clock every test database (and so the service under test) runs on: the machine's time, or,
 * with CLOCK_START set (as CI does for the date-sensitive files), a clock that starts at that
 * instant when the test file starts (restartTestClock) and runs on from there. Tests take "now" from
 * here, never from `Date.now()`.
 */
export const testClock: Clock = { now: () => current.now() };

const HOUR = 3_600_000;

/** An instant `ms` before the test clock's now. */
export const ago = (ms: number): Date => new Date(testClock.now().getTime() - ms);
/** An instant `ms` after the test clock's now. */
export const ahead = (ms: number): Date => new Date(testClock.now().getTime() + ms);
export const hoursAgo = (h: number): Date => ago(h * HOUR);

/**
 * A calendar month that lies wholly in the past, `back` months before the clock's (2 by default, so
 * that no test about a month's report sits next to the month boundary the clock may be crossing),
 * with a day in its middle: for tests about a period's rules.
 */
export function pastMonth(back = 2): { from: Date; to: Date; label: string; day: (hour?: number, dayOfMonth?: number) => Date } {
  const now = testClock.now();
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1));
  const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back + 1, 1));
  return {
    from,
    to,
    label: from.toISOString().slice(0, 7),
    day: (hour = 10, dayOfMonth = 15) => new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), dayOfMonth, hour)),
  };
}

/** A range of effective time wide enough for everything a test writes: a year either side of now. */
export function wideRange(): string {
  return `from=${ago(366 * 24 * HOUR).toISOString()}&to=${ahead(366 * 24 * HOUR).toISOString()}`;
}

/**
 * The month the fixtures' usage lies in, fixed when the test file loads (a file that runs across a
 * month boundary keeps one month): two months before the clock's, with the usage on its 15th.
 */
export const usageMonth = pastMonth();

/**
 * Starts the test clock again at CLOCK_START and fixes usageMonth anew: run before each test file
 * (tests/support/each-file.ts, vitest's setupFiles), since the files of a worker share this module.
 */
export function restartTestClock(): void {
  current = startClock();
  Object.assign(usageMonth, pastMonth());
}

/**
 * For a test whose premise is "all within one UTC day" (daily caps): when the test clock is less
 * than `seconds` before midnight UTC, waits until it is past it (at most `seconds`), so that the
 * day cannot change in the middle of the test. The calendar runs start the clock at 23:59:59.
 */
export async function clearOfMidnight(seconds = 30): Promise<void> {
  const now = testClock.now().getTime();
  const untilMidnight = 86_400_000 - (now % 86_400_000);
  if (untilMidnight < seconds * 1000) await new Promise((resolve) => setTimeout(resolve, untilMidnight + 50));
}
