import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { conversionReport, type PairTotals } from "../../services/conversion-reports.js";
import { requireRole } from "../auth.js";
import { csvResponse } from "../csv.js";
import { display, DisplayAmount, displayOrNull } from "../display.js";
import { reportWindow } from "../period.js";
import type { AppEnv } from "../request-context.js";
import { Timestamp } from "../schemas.js";
import { errorResponses, security } from "./common.js";
import { Format, REPORT_PERIOD_LIMIT, ReportPeriod, reportResponse } from "./report-schemas.js";
import { readModel } from "../read-source.js";

export const PairOut = z
  .object({
    from_asset: z.string().openapi({ example: "USD" }),
    to_asset: z.string().openapi({ example: "NET" }),
    conversions: z.number().int(),
    used: z.string().openapi({ description: "what was converted, in from_asset's smallest units" }),
    used_display: DisplayAmount,
    to_amount: z.string().openapi({ description: "what it became, in to_asset's smallest units" }),
    to_amount_display: DisplayAmount,
    remainder: z.string().openapi({ description: "what rounding left where it was, in from_asset's smallest units" }),
    remainder_display: DisplayAmount,
    average_rate: z.string().nullable().openapi({ description: "whole to_asset per whole from_asset over the period: Σ to_amount ÷ Σ used", example: "0.4" }),
    feed: z.number().int().openapi({ description: "conversions at a price feed's rate" }),
    manual: z.number().int().openapi({ description: "conversions at a rate finance entered and another key approved" }),
    first_at: Timestamp,
    last_at: Timestamp,
  })
  .openapi("ConversionPairTotals");

export const pairOut = (p: PairTotals) => ({
  from_asset: p.from.code,
  to_asset: p.to.code,
  conversions: p.conversions,
  used: p.used.toString(),
  used_display: display(p.used, p.from.scale),
  to_amount: p.toAmount.toString(),
  to_amount_display: display(p.toAmount, p.to.scale),
  remainder: p.remainder.toString(),
  remainder_display: display(p.remainder, p.from.scale),
  average_rate: p.averageRate,
  feed: p.bySource.feed,
  manual: p.bySource.manual,
  first_at: p.firstAt.toISOString(),
  last_at: p.lastAt.toISOString(),
});

const Out = z
  .object({
    data: z.array(PairOut).openapi({ description: "per pair, what was converted in the period (payouts and customers' deposits)" }),
    positions: z
      .array(
        z.object({
          pricing_asset: z.string(),
          asset: z.string(),
          position: z.string().openapi({ description: "the platform's holding of the asset from conversions (negative: given out), now" }),
          position_display: DisplayAmount,
          book_value: z.string().openapi({ description: "its value in the pricing asset's books, marked to the last rate a conversion used" }),
          book_value_display: DisplayAmount,
          latest_rate: z.string().nullable().openapi({ description: "the latest stored rate, whole pricing asset per whole asset" }),
          value_at_latest: z.string().nullable(),
          value_at_latest_display: DisplayAmount.nullable(),
          unrealised: z.string().nullable().openapi({ description: "what marking the position to the latest rate would book: negative is a loss" }),
          unrealised_display: DisplayAmount.nullable(),
        }),
      )
      .openapi({ description: "the platform's position in each asset it converted into or out of" }),
    gains_losses: z
      .array(z.object({ asset: z.string(), net: z.string(), net_display: DisplayAmount }))
      .openapi({ description: "fx:gains_losses per pricing asset: gains (positive) less losses booked from rate movements, all time" }),
  })
  .openapi("ConversionReport");

const route = createRoute({
  method: "get",
  path: "/v1/reports/conversions",
  operationId: "getConversionReport",
  tags: ["reports"],
  summary: "Conversions by pair with their rates and sources, the platform's position in each token and its gains or losses (admin, finance)",
  security,
  middleware: [requireRole("admin", "finance")] as const,
  request: { query: z.strictObject({ ...ReportPeriod, format: Format }) },
  responses: { 200: reportResponse(Out, "the report (JSON; CSV with format=csv gives the pairs)"), ...errorResponses },
});

const CSV = [
  "from_asset",
  "to_asset",
  "conversions",
  "used",
  "to_amount",
  "remainder",
  "average_rate",
  "feed",
  "manual",
  "first_at",
  "last_at",
  "used_display",
  "to_amount_display",
  "remainder_display",
] as const;

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const { from, to } = reportWindow(q, "UTC", REPORT_PERIOD_LIMIT);
    const db = c.get("deps").ledger.db;
    const now = db.clock.now();
    const r = await readModel(c, (source) => conversionReport(source, from, to, now));
    const data = r.pairs.map(pairOut);
    if (q.format === "csv")
      return csvResponse(
        c,
        "conversions.csv",
        [...CSV],
        data.map((d) => CSV.map((k) => d[k])),
      ) as never;
    const positions = r.positions.map((p) => ({
      pricing_asset: p.pricing.code,
      asset: p.asset.code,
      position: p.position.toString(),
      position_display: display(p.position, p.asset.scale),
      book_value: p.book.toString(),
      book_value_display: display(p.book, p.pricing.scale),
      latest_rate: p.latestRate,
      value_at_latest: p.valueAtLatest?.toString() ?? null,
      value_at_latest_display: displayOrNull(p.valueAtLatest, p.pricing.scale),
      unrealised: p.unrealised?.toString() ?? null,
      unrealised_display: displayOrNull(p.unrealised, p.pricing.scale),
    }));
    const gains_losses = r.gainsLosses.map((g) => ({ asset: g.asset, net: g.net.toString(), net_display: display(g.net, g.scale) }));
    return c.json({ data, positions, gains_losses }, 200);
  });
}
