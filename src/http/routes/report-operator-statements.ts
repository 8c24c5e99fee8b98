import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { operatorStatements } from "../../services/reads.js";
import { requireRole } from "../auth.js";
import { csvResponse } from "../csv.js";
import { checkPeriod } from "../period.js";
import type { AppEnv } from "../request-context.js";
import { AssetCode } from "../money-schemas.js";
import { assetFilter, errorResponses, security } from "./common.js";
import { Format, REPORT_PERIOD_LIMIT, ReportPeriod, reportResponse } from "./report-schemas.js";

const Out = z
  .object({
    data: z.array(
      z.object({
        operator_id: z.string(),
        asset: z.string(),
        opening: z.string(),
        credits: z.string().openapi({ description: "earned (usage)" }),
        debits: z.string().openapi({ description: "paid out and reversed" }),
        closing: z.string(),
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
    const { from, to } = checkPeriod(q, REPORT_PERIOD_LIMIT);
    const db = c.get("deps").ledger.db;
    const assetId = await assetFilter(db, q.asset);
    const rows = await operatorStatements(db, from, to, assetId);
    if (q.format === "csv")
      return csvResponse(
        c,
        "operator-statements.csv",
        ["operator_id", "asset", "opening", "credits", "debits", "closing", "entries"],
        rows.map((r) => [r.operator_id, r.asset, r.opening, r.credits, r.debits, r.closing, r.entries]),
      ) as never;
    return c.json({ data: rows.map((r) => ({ ...r, entries: Number(r.entries) })) }, 200);
  });
}
