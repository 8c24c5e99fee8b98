import { z } from "@hono/zod-openapi";
import { namedPeriodQuery, type PeriodLimit, type ReportWindow } from "../period.js";
import { Timestamp } from "../schemas.js";

/** `format=json` (default) or `format=csv` on every report. */
export const Format = z.enum(["json", "csv"]).default("json").openapi({ description: "json, or csv (RFC 4180, one header row)" });

/** The period of a report: `from` and `to`, or `period` (a month, UTC), checked by reportWindow. */
export const ReportPeriod = namedPeriodQuery({ from: "start, inclusive", to: "end, exclusive" });

/** A report covers at most 366 days (checkPeriod). */
export const REPORT_PERIOD_LIMIT: PeriodLimit = { maxDays: 366, name: "a report" };

/** The responses of a report: JSON or CSV. */
export const reportResponse = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema }, "text/csv": { schema: z.string() } },
});

/** The window a report covers, as it was asked. */
export const ReportWindowOut = z
  .object({
    from: Timestamp,
    to: Timestamp,
    period: z.string().nullable().openapi({ description: "the month asked for by name, or null when asked by from and to" }),
    time_zone: z.string().openapi({ description: "the zone the month and the days are in" }),
  })
  .openapi("ReportWindow");

export const windowOut = (w: ReportWindow, timeZone: string) => ({ from: w.from.toISOString(), to: w.to.toISOString(), period: w.period, time_zone: timeZone });
