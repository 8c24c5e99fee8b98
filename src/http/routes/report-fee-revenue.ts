import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { feeRevenue } from "../../services/reads.js";
import { requireRole } from "../auth.js";
import { csvResponse } from "../csv.js";
import { display, DisplayAmount } from "../display.js";
import { checkPeriod } from "../period.js";
import type { AppEnv } from "../request-context.js";
import { errorResponses, security } from "./common.js";
import { Format, REPORT_PERIOD_LIMIT, ReportPeriod, reportResponse } from "./report-schemas.js";

const Out = z
  .object({
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
  summary: "Fee revenue by party, marketplace, asset and day or month (admin, finance)",
  security,
  middleware: [requireRole("admin", "finance")] as const,
  request: { query: z.strictObject({ ...ReportPeriod, group_by: z.enum(["day", "month"]).default("day"), format: Format }) },
  responses: { 200: reportResponse(Out, "revenue per period"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const { from, to } = checkPeriod(q, REPORT_PERIOD_LIMIT);
    const rows = (await feeRevenue(c.get("deps").ledger.db, from, to, q.group_by)).map((r) => ({
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
    return c.json({ data: rows }, 200);
  });
}
