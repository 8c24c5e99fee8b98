/**
 * Accounting periods (docs/reconciliation.md, "Month-end close"): calendar months in a
 * marketplace's time zone (an IANA name; UTC by default), named YYYY-MM, each [starts_at, ends_at).
 */

export type PeriodStatus = "open" | "closing" | "closed";

const PERIOD = /^(\d{4})-(0[1-9]|1[0-2])$/;

/** Whether `tz` is a time zone this runtime knows (an IANA name such as Europe/Berlin, or UTC). */
export function isTimeZone(tz: string): boolean {
  if (tz.length === 0 || tz.length > 64) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** The wall-clock fields of an instant in a time zone. */
function wallClock(at: Date, tz: string): { y: number; m: number; d: number; h: number; min: number; s: number } {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: tz,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  }).formatToParts(at);
  const get = (t: string) => Number(parts.find((p) => p.type === t)!.value);
  return { y: get("year"), m: get("month"), d: get("day"), h: get("hour"), min: get("minute"), s: get("second") };
}

/** The UTC instant at which the wall clock in `tz` shows midnight starting day 1 of month `m` (1..12) of year `y`. */
function monthStart(y: number, m: number, tz: string): Date {
  const target = Date.UTC(y, m - 1, 1);
  // Start from the wall time read as UTC and correct by the zone's offset (twice, for a change of offset in between).
  let guess = target;
  for (let i = 0; i < 3; i++) {
    const w = wallClock(new Date(guess), tz);
    const shown = Date.UTC(w.y, w.m - 1, w.d, w.h, w.min, w.s);
    guess += target - shown;
  }
  return new Date(guess);
}

/** The period (YYYY-MM) an instant falls in, in `tz`. */
export function periodOf(at: Date, tz: string): string {
  const w = wallClock(at, tz);
  return `${String(w.y).padStart(4, "0")}-${String(w.m).padStart(2, "0")}`;
}

/** Whether `p` names a period: YYYY-MM, month 01..12, year 1970..9998. */
export function isPeriod(p: string): boolean {
  const m = PERIOD.exec(p);
  return m !== null && Number(m[1]) >= 1970 && Number(m[1]) <= 9998;
}

/** A period's bounds in `tz`: [startsAt, endsAt). */
export function periodBounds(period: string, tz: string): { startsAt: Date; endsAt: Date } {
  const m = PERIOD.exec(period);
  if (!m) throw new Error(`not a period: ${period}`);
  const [y, mo] = [Number(m[1]), Number(m[2])];
  return { startsAt: monthStart(y, mo, tz), endsAt: mo === 12 ? monthStart(y + 1, 1, tz) : monthStart(y, mo + 1, tz) };
}
