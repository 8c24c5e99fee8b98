import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { operatorEarnings, operatorStatements } from "../../services/reads.js";
import { capacityByResource } from "../../services/capacity.js";
import { ECONOMICS_COLUMNS, economicsOf, EconomicsFields } from "./earnings-economics.js";
import { paidInByOperator } from "../../services/conversion-reports.js";
import { PairOut, pairOut } from "./report-conversions.js";
import { effectiveRateUnits, paidHours } from "../../domain/earnings.js";
import { requireRole } from "../auth.js";
import { csvResponse } from "../csv.js";
import { display, DisplayAmount, displayOrNull } from "../display.js";
import type { AppEnv } from "../request-context.js";
import { namedPeriodQuery, reportWindow } from "../period.js";
import { errorResponses, security } from "./common.js";
import { visibleOperator } from "./operator-access.js";
import { FundingSplit, fundingSplits } from "./operator-funding.js";
import { OperatorId } from "./party-schemas.js";
import { Format, ReportWindowOut, reportResponse, windowOut } from "./report-schemas.js";
import { readModel } from "../read-source.js";

const Row = z
  .object({
    group: z.string(),
    asset: z.string(),
    asset_id: z.string(),
    unit: z.string(),
    records: z.number().int(),
    quantity: z.string(),
    paid_hours: z.string().nullable(),
    gross: z.string(),
    gross_display: DisplayAmount,
    fees: z.string(),
    fees_display: DisplayAmount,
    net: z.string(),
    net_display: DisplayAmount,
    effective_rate_per_hour: z
      .string()
      .nullable()
      .openapi({ description: "net per paid hour, in the asset's display units (the rates came before the `_display` convention and keep their form)" }),
    effective_rate_per_hour_units: z.string().nullable().openapi({ description: "effective_rate_per_hour in the asset's smallest units" }),
    effective_rate_per_unit: z.string().nullable().openapi({ description: "net per unit of quantity, in the asset's display units" }),
    effective_rate_per_unit_units: z.string().nullable().openapi({ description: "effective_rate_per_unit in the asset's smallest units" }),
    ...EconomicsFields,
  })
  .openapi("EarningsRow");

type Row = z.infer<typeof Row>;

/** The CSV's columns: the first ones as they have always been, those added later after them (a reader by position keeps working). */
const CSV_COLUMNS: (keyof Row)[] = [
  "group",
  "asset",
  "asset_id",
  "unit",
  "records",
  "quantity",
  "paid_hours",
  "gross",
  "fees",
  "net",
  "effective_rate_per_hour",
  "effective_rate_per_unit",
  "gross_display",
  "fees_display",
  "net_display",
  "effective_rate_per_hour_units",
  "effective_rate_per_unit_units",
  ...ECONOMICS_COLUMNS,
];

const PayableWindow = z.object({
  asset: z.string(),
  opening: z.string(),
  opening_display: DisplayAmount,
  credits: z.string(),
  credits_display: DisplayAmount,
  debits: z.string(),
  debits_display: DisplayAmount,
  closing: z.string(),
  closing_display: DisplayAmount,
});

const payableWindowOut = (r: Awaited<ReturnType<typeof operatorStatements>>[number]) => ({
  asset: r.asset,
  opening: r.opening,
  opening_display: display(r.opening, r.scale),
  credits: r.credits,
  credits_display: display(r.credits, r.scale),
  debits: r.debits,
  debits_display: display(r.debits, r.scale),
  closing: r.closing,
  closing_display: display(r.closing, r.scale),
});

const route = createRoute({
  method: "get",
  path: "/v1/operators/{id}/earnings",
  operationId: "getOperatorEarnings",
  tags: ["operators"],
  summary: "What the operator realised: quantity, paid hours, gross, fees, net and effective rate, grouped",
  security,
  middleware: [requireRole("admin", "finance", "operator")] as const,
  request: {
    params: z.object({ id: OperatorId }),
    query: z.strictObject({
      ...namedPeriodQuery(),
      group_by: z.enum(["day", "week", "month", "resource", "marketplace"]).default("day"),
      by_resource: z
        .enum(["true", "false"])
        .default("false")
        .openapi({ description: "one row per resource too (with day, week or month): what gives each row its available unit-hours and utilisation" }),
      format: Format,
    }),
  },
  responses: {
    200: reportResponse(
      z.object({
        operator_id: z.string(),
        group_by: z.string(),
        data: z.array(Row),
        paid_in: z.array(PairOut).openapi({
          description:
            "what its earnings converted in the period were paid in (docs/settlement.md): per pair, the earnings used, what they became, the average rate and the rate sources",
        }),
        window: ReportWindowOut,
        balances: z.array(PayableWindow).openapi({
          description: "the operator's payable per asset over the window (effective time): opening, credits (earnings), debits (payouts, reversals), closing",
        }),
        payable: z
          .array(FundingSplit)
          .openapi({ description: "now: each asset's available balance split into what can be paid out now and what awaits the marketplaces' money" }),
      }),
      "one row per group, asset and unit (JSON, or CSV with format=csv)",
    ),
    ...errorResponses,
  },
});

/** One row of the answer: the sums, the fees, the effective rates and the capacity figures. */
function rowOut(
  r: Awaited<ReturnType<typeof operatorEarnings>>[number],
  capacity: Parameters<typeof economicsOf>[1],
  ctx: Parameters<typeof economicsOf>[2],
): Row {
  const net = BigInt(r.net);
  const fees = BigInt(r.gross) - net;
  const perHour = effectiveRateUnits(net, r.quantity, r.unit, "hour");
  const perUnit = effectiveRateUnits(net, r.quantity, r.unit, "unit");
  return {
    group: r.group_key,
    asset: r.asset_code,
    asset_id: r.asset_id,
    unit: r.unit,
    records: Number(r.records),
    quantity: r.quantity,
    paid_hours: paidHours(r.quantity, r.unit),
    gross: r.gross,
    gross_display: display(r.gross, r.scale),
    fees: fees.toString(),
    fees_display: display(fees, r.scale),
    net: r.net,
    net_display: display(net, r.scale),
    effective_rate_per_hour: displayOrNull(perHour, r.scale),
    effective_rate_per_hour_units: perHour?.toString() ?? null,
    effective_rate_per_unit: displayOrNull(perUnit, r.scale),
    effective_rate_per_unit_units: perUnit?.toString() ?? null,
    ...economicsOf(r, capacity, ctx),
  };
}

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const q = c.req.valid("query");
    const w = reportWindow(q, "UTC");
    const { from, to } = w;
    await visibleOperator(c, id);
    const db = c.get("deps").ledger.db;
    const [balances, capacity, rows, splits, paidIn] = await readModel(c, (r) =>
      Promise.all([
        operatorStatements(r, from, to, undefined, id),
        capacityByResource(r, id),
        operatorEarnings(r, id, from, to, q.group_by, q.by_resource === "true"),
        fundingSplits(r, id),
        paidInByOperator(r, id, from, to),
      ]),
    );
    const data = rows.map((r) => rowOut(r, capacity, { groupBy: q.group_by, from, to, now: db.clock.now() }));
    if (q.format === "csv") {
      return csvResponse(
        c,
        `earnings-${id}-${q.group_by}-${from.toISOString().slice(0, 10)}-${to.toISOString().slice(0, 10)}.csv`,
        CSV_COLUMNS,
        data.map((d) => CSV_COLUMNS.map((k) => d[k])),
      ) as never;
    }
    return c.json(
      {
        operator_id: id,
        group_by: q.group_by,
        data,
        window: windowOut(w, "UTC"),
        balances: balances.map(payableWindowOut),
        paid_in: paidIn.map(pairOut),
        payable: splits.map((f) => f.split),
      },
      200,
    );
  });
}
