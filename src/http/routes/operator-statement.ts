import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import {
  decodeStatementCursor,
  encodeStatementCursor,
  isStatementEntry,
  operatorOpeningBalances,
  operatorStatement,
  type StatementRow,
} from "../../services/reads.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { csvResponse } from "../csv.js";
import { display, DisplayAmount } from "../display.js";
import { namedPeriodQuery, reportWindow } from "../period.js";
import { ApiError } from "../problem.js";
import { CursorQuery, Timestamp, Uuid } from "../schemas.js";
import { errorResponses, security } from "./common.js";
import { visibleOperator } from "./operator-access.js";
import { FundingSplit, fundingSplits } from "./operator-funding.js";
import { OperatorId } from "./party-schemas.js";
import { readModel } from "../read-source.js";

const Line = z
  .object({
    entry_id: z.string(),
    asset_id: z.string(),
    asset: z.string(),
    transfer_id: z.string(),
    description: z.string(),
    amount: z.string().openapi({ description: "signed: + credited to the operator, − debited" }),
    amount_display: DisplayAmount,
    balance_after: z.string().openapi({ description: "the payable's balance after this line, in the statement's order (the same on every page)" }),
    balance_after_display: DisplayAmount,
    payout_id: z.string().nullable().openapi({ description: "the payout this line pays out (its hold posted); null for other lines" }),
    tx_hash: z.string().nullable().openapi({ description: "the chain transaction that paid the payout; null for other lines and off-chain payouts" }),
    external_reference: z.string().nullable().openapi({ description: "an off-chain payout's payment reference (as marked paid); null otherwise" }),
    effective_at: Timestamp,
    booked_at: Timestamp,
  })
  .openapi("StatementLine");

const AssetBalance = z.object({ asset_id: z.string(), balance: z.string(), balance_display: DisplayAmount });

const route = createRoute({
  method: "get",
  path: "/v1/operators/{id}/statement",
  operationId: "getOperatorStatement",
  tags: ["operators"],
  summary: "Every posted entry on the operator's payable effective in [from, to), in effective order with running balance (JSON, or CSV with format=csv)",
  description:
    "JSON: a page of lines (`data`, `next_cursor`, `limit`), the running balance the same on every page. CSV: every line of the period in one file; `cursor` and `limit` are refused with it.",
  security,
  middleware: [requireRole("admin", "finance", "operator")] as const,
  request: {
    params: z.object({ id: OperatorId }),
    query: CursorQuery.extend({ ...namedPeriodQuery(), asset_id: Uuid.optional(), format: z.enum(["json", "csv"]).default("json") }),
  },
  responses: {
    200: {
      description: "the statement",
      content: {
        "application/json": {
          schema: z
            .object({
              operator_id: z.string(),
              from: Timestamp,
              to: Timestamp,
              opening: z.array(AssetBalance).openapi({ description: "each payable's balance from the entries effective before `from`" }),
              closing: z.array(AssetBalance).openapi({ description: "each payable's balance from the entries effective before `to`" }),
              data: z.array(Line).openapi({ description: "this page's lines: by asset, then effective order" }),
              next_cursor: z.string().nullable(),
              limit: z.number().int().openapi({ description: "the most lines a page holds (the `limit` asked for, or 100)" }),
              payable: z.array(FundingSplit).openapi({
                description:
                  "now (not at the end of the period): each asset's available balance split into what can be paid out now and what awaits the marketplaces' money",
              }),
            })
            .openapi("OperatorStatement"),
        },
        "text/csv": { schema: z.string() },
      },
    },
    ...errorResponses,
  },
});

/** The CSV holds every line of the period, up to this many. */
const MAX_LINES = 100_000;

const CSV_COLUMNS = [
  "entry_id",
  "asset",
  "transfer_id",
  "description",
  "amount",
  "balance_after",
  "effective_at",
  "booked_at",
  // Added later, so after the first ones: a reader by position keeps working.
  "payout_id",
  "tx_hash",
  "external_reference",
  "amount_display",
  "balance_after_display",
] as const;

function lineOut(r: StatementRow) {
  const amount = r.side === "credit" ? BigInt(r.posted_amount) : -BigInt(r.posted_amount);
  return {
    entry_id: r.id,
    asset_id: r.asset_id,
    asset: r.asset_code,
    transfer_id: r.transfer_id,
    description: r.description ?? "",
    amount: amount.toString(),
    amount_display: display(amount, r.scale),
    balance_after: r.balance_after,
    balance_after_display: display(r.balance_after, r.scale),
    payout_id: r.payout_id,
    tx_hash: r.tx_hash,
    external_reference: r.external_reference,
    effective_at: new Date(r.effective_at).toISOString(),
    booked_at: new Date(r.created_at).toISOString(),
  };
}

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const q = c.req.valid("query");
    const { from, to } = reportWindow(q, "UTC");
    await visibleOperator(c, id);
    const db = c.get("deps").ledger.db;
    if (q.format === "csv") {
      const paged = (["cursor", "limit"] as const).filter((k) => c.req.query(k) !== undefined);
      if (paged.length > 0)
        throw new ApiError(
          "invalid_request",
          "the CSV statement holds every line of the period: it takes no cursor or limit",
          paged.map((k) => ({ path: k, message: "not with format=csv" })),
        );
      const rows = await readModel(c, (r) => operatorStatement(r, id, { from, to }, { assetId: q.asset_id, limit: MAX_LINES + 1 }));
      if (rows.length > MAX_LINES)
        throw new ApiError("invalid_request", `more than ${MAX_LINES} entries in this period: ask for a shorter one`, [
          { path: "to", message: "period too long" },
        ]);
      const lines = rows.map(lineOut);
      return csvResponse(
        c,
        `statement-${id}-${from.toISOString().slice(0, 10)}-${to.toISOString().slice(0, 10)}.csv`,
        [...CSV_COLUMNS],
        lines.map((l) => CSV_COLUMNS.map((k) => l[k])),
      ) as never;
    }
    const after = q.cursor === undefined ? undefined : decodeStatementCursor(q.cursor);
    if (q.cursor !== undefined && (after === undefined || !(await isStatementEntry(db, id, after, q.asset_id))))
      throw new ApiError("invalid_request", "cursor is not one this API returned", [{ path: "cursor", message: "invalid" }]);
    const [rows, openings, closings, splits] = await readModel(c, (r) =>
      Promise.all([
        operatorStatement(r, id, { from, to }, { assetId: q.asset_id, after, limit: q.limit + 1 }),
        operatorOpeningBalances(r, id, from),
        operatorOpeningBalances(r, id, to),
        fundingSplits(r, id),
      ]),
    );
    const data = rows.slice(0, q.limit).map(lineOut);
    const balances = (found: typeof openings) =>
      found
        .filter((o) => q.asset_id === undefined || o.asset_id === q.asset_id)
        .map((o) => ({ asset_id: o.asset_id, balance: o.balance, balance_display: display(o.balance, o.scale) }));
    const [opening, closing] = [balances(openings), balances(closings)];
    const payable = splits.map((f) => f.split).filter((f) => q.asset_id === undefined || f.asset_id === q.asset_id);
    const next_cursor = rows.length > q.limit ? encodeStatementCursor(data[data.length - 1]!.entry_id) : null;
    return c.json({ operator_id: id, from: from.toISOString(), to: to.toISOString(), opening, closing, data, next_cursor, limit: q.limit, payable }, 200);
  });
}
