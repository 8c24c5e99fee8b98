import { z } from "@hono/zod-openapi";
import { ApiError } from "../problem.js";
import { Timestamp } from "../schemas.js";

/** `format=json` (default) or `format=csv` on every report. */
export const Format = z.enum(["json", "csv"]).default("json").openapi({ description: "json, or csv (RFC 4180, one header row)" });

export const Period = { from: Timestamp.openapi({ description: "start, inclusive" }), to: Timestamp.openapi({ description: "end, exclusive" }) };

/** A report period: from before to, at most 366 days. */
export function reportPeriod(q: { from: string; to: string }): { from: Date; to: Date } {
  const from = new Date(q.from);
  const to = new Date(q.to);
  if (from >= to) throw new ApiError("invalid_request", "from must be before to", [{ path: "from", message: "must be before to" }]);
  if (to.getTime() - from.getTime() > 366 * 86_400_000) throw new ApiError("invalid_request", "a report covers at most 366 days", [{ path: "to", message: "period too long" }]);
  return { from, to };
}

/** The responses of a report: JSON or CSV. */
export const reportResponse = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema }, "text/csv": { schema: z.string() } },
});
