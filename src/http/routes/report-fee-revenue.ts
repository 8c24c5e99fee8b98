import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { feeRevenue, feeRevenueBalances } from "../../services/reads.js";
import { reportTimeZone } from "../../services/periods.js";
import { requireRole } from "../auth.js";
import { csvResponse } from "../csv.js";
import { display, DisplayAmount } from "../display.js";
import { namedPeriodQuery, reportWindow } from "../period.js";
import type { AppEnv } from "../request-context.js";
import { errorResponses, security } from "./common.js";
import { Format, REPORT_PERIOD_LIMIT, ReportWindowOut, reportResponse, windowOut } from "./report-schemas.js";
import { readModel } from "../read-source.js";

const Out = z
  .object({
    window: ReportWindowOut,
    balances: z
      .array(
        z.object({
          asset: z.string(),
          marketplace_id: z.string().nullable(),
          party: z.string(),
          opening: z.string().openapi({ description: "revenue earned before the window (effective time)" }),
          opening_display: DisplayAmount,
          movements: z.string().openapi({ description: "revenue of the window: fees earned less fees reversed" }),
          movements_display: DisplayAmount,
          closing: z.string().openapi({ description: "opening + movements" }),
          closing_display: DisplayAmount,
        }),
      )
      .openapi({ description: "per party, marketplace and asset: revenue to date at the start and the end of the window" }),
    data: z.array(
      z.object({
        period: z.string(),
        asset: z.string(),
        marketplace_id: z.string().nullable(),
        party: z.string().openapi({ description: "marketplace, protocol, or another party of the fee schedules" }),
        revenue: z.string().openapi({ description: "fees earned less fees reversed, in the asset's smallest units" }),
        revenue_display: DisplayAmount,
        entries: z.number().int(),
      }),
    ),
  })
  .openapi("FeeRevenue");

const route = createRoute({
  method: "get",
  path: "/v1/reports/fee-revenue",
  operationId: "getFeeRevenueReport",
  tags: ["reports"],
  summary: "Fee revenue by party, marketplace, asset and day or month, with opening and closing revenue to date (admin, finance)",
  description:
    "Asked by `from` and `to`, or by `period` (a month: in the marketplace's time zone with `marketplace_id`, UTC without). A closed month's report does not change: what comes late is booked in the next open month.",
  security,
  middleware: [requireRole("admin", "finance")] as const,
  request: {
    query: z.strictObject({
      ...namedPeriodQuery({ from: "start, inclusive", to: "end, exclusive" }),
      marketplace_id: z.string().max(100).optional().openapi({ description: "one marketplace's fees (and its time zone for days, months and `period`)" }),
      group_by: z.enum(["day", "month"]).default("day"),
      format: Format,
    }),
  },
  responses: { 200: reportResponse(Out, "revenue per period"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const db = c.get("deps").ledger.db;
    const timeZone = await reportTimeZone(db, q.marketplace_id);
    const w = reportWindow(q, timeZone, REPORT_PERIOD_LIMIT);
    const scope = { from: w.from, to: w.to, timeZone, marketplaceId: q.marketplace_id };
    const [revenue, revenueBalances] = await readModel(c, (r) =>
      Promise.all([feeRevenue(r, scope, q.group_by), q.format === "csv" ? Promise.resolve([]) : feeRevenueBalances(r, scope)]),
    );
    const rows = revenue.map((r) => ({
      period: r.period,
      asset: r.asset,
      marketplace_id: r.marketplace_id,
      party: r.party,
      revenue: r.revenue,
      revenue_display: display(r.revenue, r.scale),
      entries: Number(r.entries),
    }));
    if (q.format === "csv")
      return csvResponse(
        c,
        "fee-revenue.csv",
        ["period", "asset", "marketplace_id", "party", "revenue", "entries", "revenue_display"],
        rows.map((r) => [r.period, r.asset, r.marketplace_id, r.party, r.revenue, r.entries, r.revenue_display]),
      ) as never;
    const balances = revenueBalances.map((b) => ({
      asset: b.asset,
      marketplace_id: b.marketplace_id,
      party: b.party,
      opening: b.opening,
      opening_display: display(b.opening, b.scale),
      movements: b.movements,
      movements_display: display(b.movements, b.scale),
      closing: b.closing,
      closing_display: display(b.closing, b.scale),
    }));
    return c.json({ window: windowOut(w, timeZone), balances, data: rows }, 200);
  });
}
