import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { isTimeZone } from "../../domain/periods.js";
import { trialBalance, trialBalanceWindow } from "../../services/reads.js";
import { requireRole } from "../auth.js";
import { csvResponse } from "../csv.js";
import { display, DisplayAmount } from "../display.js";
import { namedPeriodQuery, reportWindow, type ReportWindow } from "../period.js";
import { ApiError } from "../problem.js";
import type { AppEnv } from "../request-context.js";
import { Timestamp } from "../schemas.js";
import { AssetCode } from "../money-schemas.js";
import { assetFilter, errorResponses, security } from "./common.js";
import { Format, REPORT_PERIOD_LIMIT, ReportWindowOut, reportResponse, windowOut } from "./report-schemas.js";
import { readModel } from "../read-source.js";

const Row = z.object({
  account_id: z.string(),
  asset: z.string(),
  marketplace_id: z.string().nullable(),
  ref: z.string(),
  code: z.string(),
  normal_side: z.enum(["debit", "credit"]),
  opening: z.string().nullable().openapi({ description: "asked for a window: the balance before it, on the account's normal side; null otherwise" }),
  opening_display: DisplayAmount.nullable(),
  debits: z.string().openapi({ description: "asked for a window: the debits of the window; otherwise every debit to date (or to as_of)" }),
  debits_display: DisplayAmount,
  credits: z.string(),
  credits_display: DisplayAmount,
  balance: z.string().openapi({ description: "on the account's normal side, at the end (the closing balance, for a window)" }),
  balance_display: DisplayAmount,
});
const Out = z
  .object({
    as_of: Timestamp.nullable(),
    window: ReportWindowOut.nullable().openapi({ description: "the window asked for (from and to, or period), or null" }),
    accounts: z.array(Row),
    totals: z.array(
      z.object({
        asset: z.string(),
        debits: z.string(),
        debits_display: DisplayAmount,
        credits: z.string(),
        credits_display: DisplayAmount,
        balanced: z.boolean(),
      }),
    ),
  })
  .openapi("TrialBalance");

const route = createRoute({
  method: "get",
  path: "/v1/reports/trial-balance",
  operationId: "getTrialBalance",
  tags: ["reports"],
  summary: "Every account's posted debits and credits per asset, and totals that must balance (admin, finance)",
  description:
    "Now, as of an instant (`as_of`), or for a window (`from` and `to`, or `period`, a month in `time_zone`): opening balance, the window's debits and credits, closing balance. A closed month's trial balance does not change: what comes late is booked in the next open month.",
  security,
  middleware: [requireRole("admin", "finance")] as const,
  request: {
    query: z.strictObject({
      as_of: Timestamp.optional().openapi({
        description: "the entries effective at or before this instant (corrections with what they correct); default: the balances now",
      }),
      ...namedPeriodQuery({ from: "window start, inclusive (effective time)", to: "window end, exclusive" }),
      time_zone: z
        .string()
        .max(64)
        .refine(isTimeZone, "not an IANA time zone")
        .optional()
        .openapi({ description: "the zone `period` is a month in; default UTC" }),
      asset: AssetCode.optional(),
      format: Format,
    }),
  },
  responses: { 200: reportResponse(Out, "the trial balance"), ...errorResponses },
});

type TrialRows = (Awaited<ReturnType<typeof trialBalance>>[number] & { opening_debits?: string; opening_credits?: string })[];

const onNormalSide = (side: "debit" | "credit", debits: string, credits: string) =>
  side === "debit" ? BigInt(debits) - BigInt(credits) : BigInt(credits) - BigInt(debits);

/** Each account's row, with its balance on its normal side. */
const accountsOut = (rows: TrialRows) =>
  rows.map((r) => {
    const opening = r.opening_debits === undefined ? null : onNormalSide(r.normal_side, r.opening_debits, r.opening_credits ?? "0");
    const balance = (opening ?? 0n) + onNormalSide(r.normal_side, r.debits, r.credits);
    return {
      account_id: r.account_id,
      asset: r.asset,
      marketplace_id: r.marketplace_id,
      ref: r.ref,
      code: r.code,
      normal_side: r.normal_side,
      opening: opening?.toString() ?? null,
      opening_display: opening === null ? null : display(opening, r.scale),
      debits: r.debits,
      debits_display: display(r.debits, r.scale),
      credits: r.credits,
      credits_display: display(r.credits, r.scale),
      balance: balance.toString(),
      balance_display: display(balance, r.scale),
    };
  });

/** Per asset: the sums of debits and credits, which must be equal. */
function totalsOut(rows: TrialRows) {
  const sums = new Map<string, { scale: number; debits: bigint; credits: bigint }>();
  for (const r of rows) {
    const s = sums.get(r.asset) ?? { scale: r.scale, debits: 0n, credits: 0n };
    s.debits += BigInt(r.debits);
    s.credits += BigInt(r.credits);
    sums.set(r.asset, s);
  }
  return [...sums].map(([asset, s]) => ({
    asset,
    debits: s.debits.toString(),
    debits_display: display(s.debits, s.scale),
    credits: s.credits.toString(),
    credits_display: display(s.credits, s.scale),
    balanced: s.debits === s.credits,
  }));
}

/** The CSV's columns: the display ones came later, after the first ones, so that a reader by position keeps working. */
const CSV_COLUMNS: (keyof ReturnType<typeof accountsOut>[number])[] = [
  "asset",
  "account_id",
  "marketplace_id",
  "ref",
  "code",
  "normal_side",
  "debits",
  "credits",
  "balance",
  "debits_display",
  "credits_display",
  "balance_display",
  "opening",
  "opening_display",
];

/** as_of, or a window (from and to, or period in time_zone), or neither (now): never both. */
function trialWindow(q: { as_of?: string; from?: string; to?: string; period?: string; time_zone?: string }): { asOf?: Date; window?: ReportWindow } {
  const windowed = q.from !== undefined || q.to !== undefined || q.period !== undefined;
  if (!windowed) {
    if (q.time_zone !== undefined) throw new ApiError("invalid_request", "time_zone is for period", [{ path: "time_zone", message: "only with period" }]);
    return { asOf: q.as_of === undefined ? undefined : new Date(q.as_of) };
  }
  if (q.as_of !== undefined)
    throw new ApiError("invalid_request", "give either as_of or a window (from and to, or period)", [
      { path: "as_of", message: "not with from, to or period" },
    ]);
  if (q.time_zone !== undefined && q.period === undefined)
    throw new ApiError("invalid_request", "time_zone is for period", [{ path: "time_zone", message: "only with period" }]);
  return { window: reportWindow(q, q.time_zone ?? "UTC", REPORT_PERIOD_LIMIT) };
}

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const db = c.get("deps").ledger.db;
    const assetId = await assetFilter(db, q.asset);
    const { asOf, window } = trialWindow(q);
    const rows: TrialRows = await readModel(c, (r) => (window ? trialBalanceWindow(r, window.from, window.to, assetId) : trialBalance(r, asOf, assetId)));
    const accounts = accountsOut(rows);
    const totals = totalsOut(rows);
    if (q.format === "csv") {
      return csvResponse(c, "trial-balance.csv", CSV_COLUMNS, [
        ...accounts.map((a) => CSV_COLUMNS.map((k) => a[k])),
        ...totals.map((t) => [
          t.asset,
          "TOTAL",
          null,
          null,
          null,
          null,
          t.debits,
          t.credits,
          t.balanced ? "balanced" : "NOT BALANCED",
          t.debits_display,
          t.credits_display,
          null,
          null,
          null,
        ]),
      ]) as never;
    }
    return c.json({ as_of: asOf?.toISOString() ?? null, window: window ? windowOut(window, q.time_zone ?? "UTC") : null, accounts, totals }, 200);
  });
}
