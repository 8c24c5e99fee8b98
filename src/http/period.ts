/**
 * A period [from, to) as query parameters: the one schema and the one check of every route that
 * takes a period (reports and operator statements: both bounds required; time-windowed lists and
 * the audit log: both optional).
 */
import { z } from "@hono/zod-openapi";
import { ApiError } from "./problem.js";
import { isPeriod, periodBounds } from "../domain/periods.js";
import { Timestamp } from "./schemas.js";

/** What a route's `from` and `to` bound (documented on the parameters), if it says. */
interface PeriodDescriptions {
  from?: string;
  to?: string;
}

const described = <T extends z.ZodType>(schema: T, description: string | undefined): T =>
  description === undefined ? schema : schema.openapi({ description });

/** The `from` and `to` query parameters, to spread into a route's query schema. */
export function periodQuery(d?: PeriodDescriptions & { optional?: false }): { from: typeof Timestamp; to: typeof Timestamp };
export function periodQuery(d: PeriodDescriptions & { optional: true }): { from: z.ZodOptional<typeof Timestamp>; to: z.ZodOptional<typeof Timestamp> };
export function periodQuery(d: PeriodDescriptions & { optional?: boolean } = {}) {
  if (d.optional) return { from: described(Timestamp.optional(), d.from), to: described(Timestamp.optional(), d.to) };
  return { from: described(Timestamp, d.from), to: described(Timestamp, d.to) };
}

/** The longest period a route answers for, and what to call it in the refusal ("a report"). */
export interface PeriodLimit {
  maxDays: number;
  name: string;
}

/**
 * Checks a period read by `periodQuery` and returns it as dates: `from` must come before `to`
 * (when both are given), and the period may be at most `limit.maxDays` long (when the route has a
 * limit). A refusal is a 400 naming the field: `from` for the order, `to` for the length.
 */
export function checkPeriod(q: { from: string; to: string }, limit?: PeriodLimit): { from: Date; to: Date };
export function checkPeriod(q: { from?: string; to?: string }, limit?: PeriodLimit): { from?: Date; to?: Date };
export function checkPeriod(q: { from?: string; to?: string }, limit?: PeriodLimit): { from?: Date; to?: Date } {
  const from = q.from === undefined ? undefined : new Date(q.from);
  const to = q.to === undefined ? undefined : new Date(q.to);
  if (from === undefined || to === undefined) return { from, to };
  if (from >= to) throw new ApiError("invalid_request", "from must be before to", [{ path: "from", message: "must be before to" }]);
  if (limit !== undefined && to.getTime() - from.getTime() > limit.maxDays * 86_400_000) {
    throw new ApiError("invalid_request", `${limit.name} covers at most ${limit.maxDays} days`, [{ path: "to", message: "period too long" }]);
  }
  return { from, to };
}

/** A month named YYYY-MM, as accounting periods are (docs/reconciliation.md, "Month-end close"). */
export const PeriodName = z
  .string()
  .max(7)
  .refine(isPeriod, "must be a month YYYY-MM (1970-01 .. 9998-12)")
  .openapi({ description: "a month, YYYY-MM, instead of from and to", example: "2026-10" });

/** `from` and `to`, or `period` (a month): the query of a report that may be asked for a month by name. */
export const namedPeriodQuery = (d: PeriodDescriptions = {}) => ({ ...periodQuery({ ...d, optional: true }), period: PeriodName.optional() });

/** A report's window: [from, to), and the month it is when asked by name (null when asked by from and to). */
export interface ReportWindow {
  from: Date;
  to: Date;
  period: string | null;
}

/**
 * The window of a report asked either by `from` and `to` or by `period` (a month in `timeZone`:
 * the marketplace's when the report is of one marketplace, UTC otherwise), never both. Refusals are
 * 400s naming the field, as checkPeriod's.
 */
export function reportWindow(q: { from?: string; to?: string; period?: string }, timeZone: string, limit?: PeriodLimit): ReportWindow {
  if (q.period !== undefined) {
    if (q.from !== undefined || q.to !== undefined)
      throw new ApiError("invalid_request", "give either period or from and to, not both", [{ path: "period", message: "not with from or to" }]);
    const { startsAt, endsAt } = periodBounds(q.period, timeZone);
    return { from: startsAt, to: endsAt, period: q.period };
  }
  for (const field of ["from", "to"] as const) {
    if (q[field] === undefined) throw new ApiError("invalid_request", `${field} is required (or give period)`, [{ path: field, message: "required" }]);
  }
  return { ...checkPeriod({ from: q.from as string, to: q.to as string }, limit), period: null };
}
