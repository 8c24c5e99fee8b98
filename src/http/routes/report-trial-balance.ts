import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { trialBalance } from "../../services/reads.js";
import { requireRole } from "../auth.js";
import { csvResponse } from "../csv.js";
import { display, DisplayAmount } from "../display.js";
import type { AppEnv } from "../request-context.js";
import { Timestamp } from "../schemas.js";
import { AssetCode } from "../money-schemas.js";
import { assetFilter, errorResponses, security } from "./common.js";
import { Format, reportResponse } from "./report-schemas.js";

const Row = z.object({
  account_id: z.string(),
  asset: z.string(),
  marketplace_id: z.string().nullable(),
  ref: z.string(),
  code: z.string(),
  normal_side: z.enum(["debit", "credit"]),
  debits: z.string(),
  debits_display: DisplayAmount,
  credits: z.string(),
  credits_display: DisplayAmount,
  balance: z.string().openapi({ description: "on the account's normal side" }),
  balance_display: DisplayAmount,
});
const Out = z
  .object({
    as_of: Timestamp.nullable(),
    accounts: z.array(Row),
    totals: z.array(
      z.object({
        asset: z.string(),
        debits: z.string(),
        debits_display: DisplayAmount,
        credits: z.string(),
        credits_display: DisplayAmount,
        balanced: z.boolean(),
      }),
    ),
  })
  .openapi("TrialBalance");

const route = createRoute({
  method: "get",
  path: "/v1/reports/trial-balance",
  operationId: "getTrialBalance",
  tags: ["reports"],
  summary: "Every account's posted debits and credits per asset, and totals that must balance (admin, finance)",
  security,
  middleware: [requireRole("admin", "finance")] as const,
  request: {
    query: z.strictObject({
      as_of: Timestamp.optional().openapi({
        description: "the entries effective at or before this instant (corrections with what they correct); default: the balances now",
      }),
      asset: AssetCode.optional(),
      format: Format,
    }),
  },
  responses: { 200: reportResponse(Out, "the trial balance"), ...errorResponses },
});

type TrialRows = Awaited<ReturnType<typeof trialBalance>>;

/** Each account's row, with its balance on its normal side. */
const accountsOut = (rows: TrialRows) =>
  rows.map((r) => {
    const balance = r.normal_side === "debit" ? BigInt(r.debits) - BigInt(r.credits) : BigInt(r.credits) - BigInt(r.debits);
    return {
      account_id: r.account_id,
      asset: r.asset,
      marketplace_id: r.marketplace_id,
      ref: r.ref,
      code: r.code,
      normal_side: r.normal_side,
      debits: r.debits,
      debits_display: display(r.debits, r.scale),
      credits: r.credits,
      credits_display: display(r.credits, r.scale),
      balance: balance.toString(),
      balance_display: display(balance, r.scale),
    };
  });

/** Per asset: the sums of debits and credits, which must be equal. */
function totalsOut(rows: TrialRows) {
  const sums = new Map<string, { scale: number; debits: bigint; credits: bigint }>();
  for (const r of rows) {
    const s = sums.get(r.asset) ?? { scale: r.scale, debits: 0n, credits: 0n };
    s.debits += BigInt(r.debits);
    s.credits += BigInt(r.credits);
    sums.set(r.asset, s);
  }
  return [...sums].map(([asset, s]) => ({
    asset,
    debits: s.debits.toString(),
    debits_display: display(s.debits, s.scale),
    credits: s.credits.toString(),
    credits_display: display(s.credits, s.scale),
    balanced: s.debits === s.credits,
  }));
}

/** The CSV's columns: the display ones came later, after the first ones, so that a reader by position keeps working. */
const CSV_COLUMNS: (keyof ReturnType<typeof accountsOut>[number])[] = [
  "asset",
  "account_id",
  "marketplace_id",
  "ref",
  "code",
  "normal_side",
  "debits",
  "credits",
  "balance",
  "debits_display",
  "credits_display",
  "balance_display",
];

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const db = c.get("deps").ledger.db;
    const assetId = await assetFilter(db, q.asset);
    const asOf = q.as_of === undefined ? undefined : new Date(q.as_of);
    const rows = await trialBalance(db, asOf, assetId);
    const accounts = accountsOut(rows);
    const totals = totalsOut(rows);
    if (q.format === "csv") {
      return csvResponse(c, "trial-balance.csv", CSV_COLUMNS, [
        ...accounts.map((a) => CSV_COLUMNS.map((k) => a[k])),
        ...totals.map((t) => [
          t.asset,
          "TOTAL",
          null,
          null,
          null,
          null,
          t.debits,
          t.credits,
          t.balanced ? "balanced" : "NOT BALANCED",
          t.debits_display,
          t.credits_display,
          null,
        ]),
      ]) as never;
    }
    return c.json({ as_of: asOf?.toISOString() ?? null, accounts, totals }, 200);
  });
}
