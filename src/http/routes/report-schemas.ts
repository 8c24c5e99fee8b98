import { z } from "@hono/zod-openapi";
import { periodQuery, type PeriodLimit } from "../period.js";

/** `format=json` (default) or `format=csv` on every report. */
export const Format = z.enum(["json", "csv"]).default("json").openapi({ description: "json, or csv (RFC 4180, one header row)" });

/** The period of a report: `from` and `to` required. */
export const ReportPeriod = periodQuery({ from: "start, inclusive", to: "end, exclusive" });

/** A report covers at most 366 days (checkPeriod). */
export const REPORT_PERIOD_LIMIT: PeriodLimit = { maxDays: 366, name: "a report" };

/** The responses of a report: JSON or CSV. */
export const reportResponse = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema }, "text/csv": { schema: z.string() } },
});
