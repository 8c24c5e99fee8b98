import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { payoutsConfirmed } from "../../services/reads.js";
import { requireRole } from "../auth.js";
import { csvResponse } from "../csv.js";
import { checkPeriod } from "../period.js";
import type { AppEnv } from "../request-context.js";
import { errorResponses, security } from "./common.js";
import { Format, REPORT_PERIOD_LIMIT, ReportPeriod, reportResponse } from "./report-schemas.js";

const Out = z
  .object({
    data: z.array(
      z.object({
        id: z.string(),
        operator_id: z.string(),
        asset: z.string(),
        amount: z.string(),
        settlement: z.string(),
        chain_id: z.number().int().nullable(),
        to_address: z.string().nullable(),
        tx_hash: z.string().nullable(),
        block_number: z.string().nullable(),
        log_index: z.number().int().nullable(),
        external_reference: z.string().nullable(),
        confirmed_at: z.string(),
      }),
    ),
    totals: z.array(z.object({ asset: z.string(), payouts: z.number().int(), amount: z.string() })),
  })
  .openapi("PayoutReport");

const route = createRoute({
  method: "get",
  path: "/v1/reports/payouts",
  operationId: "getPayoutsReport",
  tags: ["reports"],
  summary: "Payouts confirmed in a period, with transaction hashes (admin, finance)",
  security,
  middleware: [requireRole("admin", "finance")] as const,
  request: { query: z.strictObject({ ...ReportPeriod, format: Format }) },
  responses: { 200: reportResponse(Out, "confirmed payouts, oldest first"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const { from, to } = checkPeriod(q, REPORT_PERIOD_LIMIT);
    const rows = (await payoutsConfirmed(c.get("deps").ledger.db, from, to)).map((r) => ({
      ...r,
      chain_id: r.chain_id === null ? null : Number(r.chain_id),
      confirmed_at: new Date(r.confirmed_at).toISOString(),
    }));
    if (q.format === "csv") {
      return csvResponse(
        c,
        "payouts.csv",
        [
          "id",
          "operator_id",
          "asset",
          "amount",
          "settlement",
          "chain_id",
          "to_address",
          "tx_hash",
          "block_number",
          "log_index",
          "external_reference",
          "confirmed_at",
        ],
        rows.map((r) => [
          r.id,
          r.operator_id,
          r.asset,
          r.amount,
          r.settlement,
          r.chain_id,
          r.to_address,
          r.tx_hash,
          r.block_number,
          r.log_index,
          r.external_reference,
          r.confirmed_at,
        ]),
      ) as never;
    }
    const sums = new Map<string, { n: number; amount: bigint }>();
    for (const r of rows) {
      const s = sums.get(r.asset) ?? { n: 0, amount: 0n };
      s.n++;
      s.amount += BigInt(r.amount);
      sums.set(r.asset, s);
    }
    return c.json({ data: rows, totals: [...sums].map(([asset, s]) => ({ asset, payouts: s.n, amount: s.amount.toString() })) }, 200);
  });
}
