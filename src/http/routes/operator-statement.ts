import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { operatorOpeningBalances, operatorStatement } from "../../services/reads.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { csvResponse } from "../csv.js";
import { checkPeriod, periodQuery } from "../period.js";
import { ApiError } from "../problem.js";
import { Timestamp, Uuid } from "../schemas.js";
import { errorResponses, security } from "./common.js";
import { visibleOperator } from "./operator-access.js";
import { FundingSplit, fundingSplits } from "./operator-funding.js";
import { PartyIdParam } from "./party-schemas.js";

const Line = z
  .object({
    entry_id: z.string(),
    asset_id: z.string(),
    asset: z.string(),
    transfer_id: z.string(),
    description: z.string(),
    amount: z.string().openapi({ description: "signed: + credited to the operator, − debited" }),
    balance_after: z.string(),
    effective_at: Timestamp,
    booked_at: Timestamp,
  })
  .openapi("StatementLine");

const route = createRoute({
  method: "get",
  path: "/v1/operators/{id}/statement",
  operationId: "getOperatorStatement",
  tags: ["operators"],
  summary: "Every posted entry on the operator's payable effective in [from, to), in effective order with running balance (JSON, or CSV with format=csv)",
  security,
  middleware: [requireRole("admin", "finance", "operator")] as const,
  request: {
    params: z.object({ id: PartyIdParam }),
    query: z.strictObject({ ...periodQuery(), asset_id: Uuid.optional(), format: z.enum(["json", "csv"]).default("json") }),
  },
  responses: {
    200: {
      description: "the statement",
      content: {
        "application/json": {
          schema: z.object({
            operator_id: z.string(),
            from: Timestamp,
            to: Timestamp,
            opening: z.array(z.object({ asset_id: z.string(), balance: z.string() })),
            lines: z.array(Line),
            payable: z.array(FundingSplit).openapi({
              description:
                "now (not at the end of the period): each asset's available balance split into what can be paid out now and what awaits the marketplaces' money",
            }),
          }),
        },
        "text/csv": { schema: z.string() },
      },
    },
    ...errorResponses,
  },
});

const MAX_LINES = 100_000;

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const q = c.req.valid("query");
    const { from, to } = checkPeriod(q);
    await visibleOperator(c, id);
    const db = c.get("deps").ledger.db;
    const rows = await operatorStatement(db, id, from, to, q.asset_id);
    if (rows.length > MAX_LINES)
      throw new ApiError("invalid_request", `more than ${MAX_LINES} entries in this period: ask for a shorter one`, [
        { path: "to", message: "period too long" },
      ]);
    const lines = rows
      .map((r) => ({
        entry_id: r.id,
        asset_id: r.asset_id,
        asset: r.asset_code,
        transfer_id: r.transfer_id,
        description: r.description ?? "",
        amount: (r.side === "credit" ? BigInt(r.posted_amount) : -BigInt(r.posted_amount)).toString(),
        balance_after: r.balance_after,
        effective_at: new Date(r.effective_at).toISOString(),
        booked_at: new Date(r.created_at).toISOString(),
      }))
      .filter((l) => l.amount !== "0");
    const opening = (await operatorOpeningBalances(db, id, from)).filter((o) => q.asset_id === undefined || o.asset_id === q.asset_id);
    if (q.format === "csv") {
      return csvResponse(
        c,
        `statement-${id}-${q.from.slice(0, 10)}-${q.to.slice(0, 10)}.csv`,
        ["entry_id", "asset", "transfer_id", "description", "amount", "balance_after", "effective_at", "booked_at"],
        lines.map((l) => [l.entry_id, l.asset, l.transfer_id, l.description, l.amount, l.balance_after, l.effective_at, l.booked_at]),
      ) as never;
    }
    const payable = (await fundingSplits(db, id)).map((f) => f.split).filter((f) => q.asset_id === undefined || f.asset_id === q.asset_id);
    return c.json({ operator_id: id, from: from.toISOString(), to: to.toISOString(), opening, lines, payable }, 200) as never;
  });
}
