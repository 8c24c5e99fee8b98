import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { operatorReceivables } from "../../services/receivables.js";
import { requireRole } from "../auth.js";
import { csvResponse } from "../csv.js";
import { display, DisplayAmount } from "../display.js";
import { AssetCode } from "../money-schemas.js";
import type { AppEnv } from "../request-context.js";
import { assetFilter, errorResponses, security } from "./common.js";
import { Format, reportResponse } from "./report-schemas.js";
import { readModel } from "../read-source.js";

const Row = z.object({
  operator_id: z.string(),
  asset: z.string(),
  account_id: z.string().openapi({ description: "the operator's receivable account (operator:{id}:receivable)" }),
  amount: z.string().openapi({ description: "what the operator owes now" }),
  amount_display: DisplayAmount,
  since: z.string().openapi({ description: "when what is owed now began to be owed: the first clawback since the receivable was last fully recovered" }),
  clawed_back: z.string().openapi({ description: "clawed back over the receivable's life" }),
  recovered: z.string().openapi({ description: "recovered from the operator's earnings over its life" }),
});

const Out = z
  .object({
    data: z.array(Row),
    totals: z.array(z.object({ asset: z.string(), operators: z.number().int(), amount: z.string(), amount_display: DisplayAmount })),
  })
  .openapi("OperatorReceivablesReport");

const route = createRoute({
  method: "get",
  path: "/v1/reports/operator-receivables",
  operationId: "getOperatorReceivablesReport",
  tags: ["reports"],
  summary: "What operators owe the platform now (clawbacks of earnings already paid), per operator and asset, and since when (admin, finance)",
  security,
  middleware: [requireRole("admin", "finance")] as const,
  request: { query: z.strictObject({ asset: AssetCode.optional(), format: Format }) },
  responses: { 200: reportResponse(Out, "one row per operator and asset with something owed"), ...errorResponses },
});

const CSV_COLUMNS = ["operator_id", "asset", "account_id", "amount", "amount_display", "since", "clawed_back", "recovered"] as const;

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const db = c.get("deps").ledger.db;
    const assetId = await assetFilter(db, q.asset);
    const found = await readModel(c, (r) => operatorReceivables(r, assetId));
    const data = found.map((r) => ({
      operator_id: r.operator_id,
      asset: r.asset,
      account_id: r.account_id,
      amount: r.owed,
      amount_display: display(r.owed, r.scale),
      since: new Date(r.since).toISOString(),
      clawed_back: r.clawed_back,
      recovered: r.recovered,
    }));
    if (q.format === "csv") {
      return csvResponse(
        c,
        "operator-receivables.csv",
        [...CSV_COLUMNS],
        data.map((r) => CSV_COLUMNS.map((k) => r[k])),
      ) as never;
    }
    const totals = new Map<string, { operators: number; amount: bigint; scale: number }>();
    for (const r of found) {
      const t = totals.get(r.asset) ?? { operators: 0, amount: 0n, scale: r.scale };
      t.operators++;
      t.amount += BigInt(r.owed);
      totals.set(r.asset, t);
    }
    return c.json(
      {
        data,
        totals: [...totals].map(([asset, t]) => ({ asset, operators: t.operators, amount: t.amount.toString(), amount_display: display(t.amount, t.scale) })),
      },
      200,
    );
  });
}
