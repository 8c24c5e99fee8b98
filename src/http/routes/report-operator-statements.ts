import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { operatorStatements } from "../../services/reads.js";
import { requireRole } from "../auth.js";
import { csvResponse } from "../csv.js";
import { display, DisplayAmount } from "../display.js";
import { reportWindow } from "../period.js";
import type { AppEnv } from "../request-context.js";
import { AssetCode } from "../money-schemas.js";
import { assetFilter, errorResponses, security } from "./common.js";
import { Format, REPORT_PERIOD_LIMIT, ReportPeriod, ReportWindowOut, reportResponse, windowOut } from "./report-schemas.js";
import { readModel } from "../read-source.js";

const Out = z
  .object({
    window: ReportWindowOut,
    data: z.array(
      z.object({
        operator_id: z.string(),
        asset: z.string(),
        opening: z.string(),
        opening_display: DisplayAmount,
        credits: z.string().openapi({ description: "earned (usage)" }),
        credits_display: DisplayAmount,
        debits: z.string().openapi({ description: "paid out and reversed" }),
        debits_display: DisplayAmount,
        closing: z.string(),
        closing_display: DisplayAmount,
        entries: z.number().int(),
      }),
    ),
  })
  .openapi("OperatorStatements");

const route = createRoute({
  method: "get",
  path: "/v1/reports/operator-statements",
  operationId: "getOperatorStatementsReport",
  tags: ["reports"],
  summary: "Every operator's payable over a period: opening, credits, debits, closing (admin, finance)",
  security,
  middleware: [requireRole("admin", "finance")] as const,
  request: { query: z.strictObject({ ...ReportPeriod, asset: AssetCode.optional(), format: Format }) },
  responses: { 200: reportResponse(Out, "one row per operator and asset"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const w = reportWindow(q, "UTC", REPORT_PERIOD_LIMIT);
    const { from, to } = w;
    const db = c.get("deps").ledger.db;
    const assetId = await assetFilter(db, q.asset);
    const rows = (await readModel(c, (r) => operatorStatements(r, from, to, assetId))).map((r) => ({
      operator_id: r.operator_id,
      asset: r.asset,
      opening: r.opening,
      opening_display: display(r.opening, r.scale),
      credits: r.credits,
      credits_display: display(r.credits, r.scale),
      debits: r.debits,
      debits_display: display(r.debits, r.scale),
      closing: r.closing,
      closing_display: display(r.closing, r.scale),
      entries: Number(r.entries),
    }));
    if (q.format === "csv")
      return csvResponse(
        c,
        "operator-statements.csv",
        // The display columns came later: after the first ones, so that a reader by position keeps working.
        [
          "operator_id",
          "asset",
          "opening",
          "credits",
          "debits",
          "closing",
          "entries",
          "opening_display",
          "credits_display",
          "debits_display",
          "closing_display",
        ],
        rows.map((r) => [
          r.operator_id,
          r.asset,
          r.opening,
          r.credits,
          r.debits,
          r.closing,
          r.entries,
          r.opening_display,
          r.credits_display,
          r.debits_display,
          r.closing_display,
        ]),
      ) as never;
    return c.json({ window: windowOut(w, "UTC"), data: rows }, 200);
  });
}
