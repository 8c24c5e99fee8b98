/**
 * A period [from, to) as query parameters: the one schema and the one check of every route that
 * takes a period (reports and operator statements: both bounds required; time-windowed lists and
 * the audit log: both optional).
 */
import type { z } from "@hono/zod-openapi";
import { ApiError } from "./problem.js";
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
