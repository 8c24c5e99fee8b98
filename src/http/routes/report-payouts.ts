import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { payoutsConfirmed } from "../../services/reads.js";
import { requireRole } from "../auth.js";
import { csvResponse } from "../csv.js";
import { display, DisplayAmount } from "../display.js";
import { reportWindow } from "../period.js";
import type { AppEnv } from "../request-context.js";
import { errorResponses, security } from "./common.js";
import { Format, REPORT_PERIOD_LIMIT, ReportPeriod, reportResponse } from "./report-schemas.js";
import { readModel } from "../read-source.js";

const Out = z
  .object({
    data: z.array(
      z.object({
        id: z.string(),
        operator_id: z.string(),
        asset: z.string(),
        amount: z.string(),
        amount_display: DisplayAmount,
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
    totals: z.array(z.object({ asset: z.string(), payouts: z.number().int(), amount: z.string(), amount_display: DisplayAmount })),
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

type Found = Awaited<ReturnType<typeof payoutsConfirmed>>;

const rowsOut = (found: Found) =>
  found.map((r) => ({
    id: r.id,
    operator_id: r.operator_id,
    asset: r.asset,
    amount: r.amount,
    amount_display: display(r.amount, r.scale),
    settlement: r.settlement,
    chain_id: r.chain_id === null ? null : Number(r.chain_id),
    to_address: r.to_address,
    tx_hash: r.tx_hash,
    block_number: r.block_number,
    log_index: r.log_index,
    external_reference: r.external_reference,
    confirmed_at: new Date(r.confirmed_at).toISOString(),
  }));

/** Per asset: how many payouts, and their sum. */
function totalsOut(found: Found) {
  const sums = new Map<string, { n: number; amount: bigint; scale: number }>();
  for (const r of found) {
    const s = sums.get(r.asset) ?? { n: 0, amount: 0n, scale: r.scale };
    s.n++;
    s.amount += BigInt(r.amount);
    sums.set(r.asset, s);
  }
  return [...sums].map(([asset, s]) => ({ asset, payouts: s.n, amount: s.amount.toString(), amount_display: display(s.amount, s.scale) }));
}

/** The CSV's columns: amount_display came later, after the first ones, so that a reader by position keeps working. */
const CSV_COLUMNS: (keyof ReturnType<typeof rowsOut>[number])[] = [
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
  "amount_display",
];

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const { from, to } = reportWindow(q, "UTC", REPORT_PERIOD_LIMIT);
    const found = await readModel(c, (db) => payoutsConfirmed(db, from, to));
    const rows = rowsOut(found);
    if (q.format === "csv") {
      return csvResponse(
        c,
        "payouts.csv",
        CSV_COLUMNS,
        rows.map((r) => CSV_COLUMNS.map((k) => r[k])),
      ) as never;
    }
    return c.json({ data: rows, totals: totalsOut(found) }, 200);
  });
}
