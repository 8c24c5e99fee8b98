import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { operatorEarnings } from "../../services/reads.js";
import { effectiveRate, paidHours } from "../../domain/earnings.js";
import { requireRole } from "../auth.js";
import { csvResponse } from "../csv.js";
import type { AppEnv } from "../request-context.js";
import { checkPeriod, periodQuery } from "../period.js";
import { errorResponses, security } from "./common.js";
import { visibleOperator } from "./operator-access.js";
import { FundingSplit, fundingSplits } from "./operator-funding.js";
import { PartyIdParam } from "./party-schemas.js";
import { Format, reportResponse } from "./report-schemas.js";

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
    fees: z.string(),
    net: z.string(),
    effective_rate_per_hour: z.string().nullable().openapi({ description: "net per paid hour, in the asset's display units" }),
    effective_rate_per_unit: z.string().nullable(),
  })
  .openapi("EarningsRow");

const route = createRoute({
  method: "get",
  path: "/v1/operators/{id}/earnings",
  operationId: "getOperatorEarnings",
  tags: ["operators"],
  summary: "What the operator realised: quantity, paid hours, gross, fees, net and effective rate, grouped",
  security,
  middleware: [requireRole("admin", "finance", "operator")] as const,
  request: {
    params: z.object({ id: PartyIdParam }),
    query: z.strictObject({ ...periodQuery(), group_by: z.enum(["day", "resource", "marketplace"]).default("day"), format: Format }),
  },
  responses: {
    200: reportResponse(
      z.object({
        operator_id: z.string(),
        group_by: z.string(),
        data: z.array(Row),
        payable: z
          .array(FundingSplit)
          .openapi({ description: "now: each asset's available balance split into what can be paid out now and what awaits the marketplaces' money" }),
      }),
      "one row per group, asset and unit (JSON, or CSV with format=csv)",
    ),
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const q = c.req.valid("query");
    const { from, to } = checkPeriod(q);
    await visibleOperator(c, id);
    const db = c.get("deps").ledger.db;
    const [rows, splits] = await Promise.all([operatorEarnings(db, id, from, to, q.group_by), fundingSplits(db, id)]);
    const data = rows.map((r) => {
      const net = BigInt(r.net);
      return {
        group: r.group_key,
        asset: r.asset_code,
        asset_id: r.asset_id,
        unit: r.unit,
        records: Number(r.records),
        quantity: r.quantity,
        paid_hours: paidHours(r.quantity, r.unit),
        gross: r.gross,
        fees: (BigInt(r.gross) - net).toString(),
        net: r.net,
        effective_rate_per_hour: effectiveRate(net, r.scale, r.quantity, r.unit, "hour"),
        effective_rate_per_unit: effectiveRate(net, r.scale, r.quantity, r.unit, "unit"),
      };
    });
    if (q.format === "csv") {
      const columns = Object.keys(Row.shape) as (keyof z.infer<typeof Row>)[];
      return csvResponse(
        c,
        `earnings-${id}-${q.group_by}-${q.from.slice(0, 10)}-${q.to.slice(0, 10)}.csv`,
        columns,
        data.map((d) => columns.map((k) => d[k])),
      ) as never;
    }
    return c.json({ operator_id: id, group_by: q.group_by, data, payable: splits.map((f) => f.split) }, 200);
  });
}
