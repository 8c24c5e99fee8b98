import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import {
  customerStatement,
  decodeCustomerStatementCursor,
  encodeCustomerStatementCursor,
  isStatementCursorOf,
  type StatementParty,
} from "../../services/customer-statements.js";
import { requireRole } from "../auth.js";
import { csvResponse } from "../csv.js";
import { htmlPageHeaders } from "../html.js";
import { reportTimeZone } from "../../services/periods.js";
import { namedPeriodQuery, reportWindow } from "../period.js";
import { ApiError } from "../problem.js";
import type { AppEnv } from "../request-context.js";
import { CursorQuery } from "../schemas.js";
import { errorResponses, security } from "./common.js";
import { statementHtml } from "./customer-statement-html.js";
import { CustomerStatement, STATEMENT_CSV_COLUMNS, statementAssetOut, statementHeading, statementLineOut } from "./customer-statement-schemas.js";
import { visibleCustomer } from "./party-access.js";
import { CustomerId, MarketplaceId } from "./party-schemas.js";
import { readModel } from "../read-source.js";

const Query = CursorQuery.extend({
  marketplace_id: MarketplaceId.optional().openapi({ description: "admin and finance keys: required (customer ids are per marketplace)" }),
  ...namedPeriodQuery({ from: "the period's start (included), in effective time", to: "the period's end (excluded)" }),
  format: z.enum(["json", "csv", "html"]).default("json").openapi({ description: "json (paged), csv or html (the whole period in one answer)" }),
});

const route = createRoute({
  method: "get",
  path: "/v1/customers/{id}/statement",
  operationId: "getCustomerStatement",
  tags: ["usage"],
  summary:
    "A customer's statement for [from, to): per asset its opening balance, deposits, usage, refunds, other movements and closing balance (JSON, CSV or HTML)",
  description:
    "JSON: the sums per asset (`assets`, for the whole period on every page) and a page of lines (`data`, `next_cursor`, `limit`). CSV: every line of the period in one file. HTML: a printable page of the whole period. `cursor` and `limit` are refused with CSV and HTML. Admin and finance keys name the `marketplace_id`; a marketplace key reads its own customers only.",
  security,
  middleware: [requireRole("admin", "finance", "marketplace")] as const,
  request: { params: z.object({ id: CustomerId }), query: Query },
  responses: {
    200: {
      description: "the statement",
      content: {
        "application/json": { schema: CustomerStatement },
        "text/csv": { schema: z.string().openapi({ description: "one row per line, the JSON lines' fields" }) },
        "text/html": { schema: z.string().openapi({ description: "a self-contained printable page" }) },
      },
    },
    ...errorResponses,
  },
});

/** The CSV holds every line of the period, up to this many; the HTML page, being printed, fewer. */
const MAX_LINES = { csv: 100_000, html: 10_000 } as const;

type Period = { from: Date; to: Date };

/** A whole-period format (CSV, HTML) takes no cursor or limit. */
function refusePaging(c: Context<AppEnv>, format: "csv" | "html"): void {
  const paged = (["cursor", "limit"] as const).filter((k) => c.req.query(k) !== undefined);
  if (paged.length > 0)
    throw new ApiError(
      "invalid_request",
      `the ${format.toUpperCase()} statement holds every line of the period: it takes no cursor or limit`,
      paged.map((k) => ({ path: k, message: `not with format=${format}` })),
    );
}

/** Every line of the period (and the sums, for HTML), refused beyond the format's limit. */
async function wholePeriod(c: Context<AppEnv>, party: StatementParty, period: Period, format: "csv" | "html") {
  refusePaging(c, format);
  const max = MAX_LINES[format];
  const { lines, totals } = await readModel(c, (db) => customerStatement(db, party, period, { limit: max + 1, totals: format === "html" }));
  if (lines.length > max)
    throw new ApiError("invalid_request", `more than ${max} lines in this period: ask for a shorter one${format === "html" ? " or format=csv" : ""}`, [
      { path: "to", message: "period too long" },
    ]);
  return { lines: lines.map(statementLineOut), assets: totals.map(statementAssetOut) };
}

/** A page of lines after the cursor, with the sums of the whole period. */
async function page(c: Context<AppEnv>, party: StatementParty, period: Period, q: { cursor?: string; limit: number }) {
  const db = c.get("deps").ledger.db;
  const after = q.cursor === undefined ? undefined : decodeCustomerStatementCursor(q.cursor);
  if (q.cursor !== undefined && (after === undefined || !(await isStatementCursorOf(db, party, after))))
    throw new ApiError("invalid_request", "cursor is not one this API returned", [{ path: "cursor", message: "invalid" }]);
  const { lines, totals } = await readModel(c, (r) => customerStatement(r, party, period, { after, limit: q.limit + 1, totals: true }));
  const last = lines.length > q.limit ? lines[q.limit - 1] : undefined;
  return {
    assets: totals.map(statementAssetOut),
    data: lines.slice(0, q.limit).map(statementLineOut),
    next_cursor: last ? encodeCustomerStatementCursor(last) : null,
    limit: q.limit,
  };
}

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const q = c.req.valid("query");
    const party = await visibleCustomer(c, id, q.marketplace_id);
    const period = reportWindow(q, await reportTimeZone(c.get("deps").ledger.db, party.marketplace.id));
    const heading = statementHeading(party, period, c.get("deps").ledger.db.clock.now());
    if (q.format === "csv") {
      const { lines } = await wholePeriod(c, party, period, "csv");
      const name = `statement-${party.marketplace.id}-${id}-${period.period ?? `${period.from.toISOString().slice(0, 10)}-${period.to.toISOString().slice(0, 10)}`}.csv`;
      return csvResponse(
        c,
        name,
        [...STATEMENT_CSV_COLUMNS],
        lines.map((l) => STATEMENT_CSV_COLUMNS.map((k) => l[k])),
      ) as never;
    }
    if (q.format === "html") {
      const { lines, assets } = await wholePeriod(c, party, period, "html");
      return c.body(statementHtml(heading, assets, lines), 200, htmlPageHeaders) as never;
    }
    return c.json({ ...heading, ...(await page(c, party, period, q)) }, 200);
  });
}
