import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { trialBalance } from "../../services/reads.js";
import { requireRole } from "../auth.js";
import { csvResponse } from "../csv.js";
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
  credits: z.string(),
  balance: z.string().openapi({ description: "on the account's normal side" }),
});
const Out = z
  .object({
    as_of: Timestamp.nullable(),
    accounts: z.array(Row),
    totals: z.array(z.object({ asset: z.string(), debits: z.string(), credits: z.string(), balanced: z.boolean() })),
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

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const db = c.get("deps").ledger.db;
    const assetId = await assetFilter(db, q.asset);
    const asOf = q.as_of === undefined ? undefined : new Date(q.as_of);
    const rows = await trialBalance(db, asOf, assetId);
    const accounts = rows.map((r) => ({
      account_id: r.account_id,
      asset: r.asset,
      marketplace_id: r.marketplace_id,
      ref: r.ref,
      code: r.code,
      normal_side: r.normal_side,
      debits: r.debits,
      credits: r.credits,
      balance: (r.normal_side === "debit" ? BigInt(r.debits) - BigInt(r.credits) : BigInt(r.credits) - BigInt(r.debits)).toString(),
    }));
    const sums = new Map<string, { debits: bigint; credits: bigint }>();
    for (const r of rows) {
      const s = sums.get(r.asset) ?? { debits: 0n, credits: 0n };
      s.debits += BigInt(r.debits);
      s.credits += BigInt(r.credits);
      sums.set(r.asset, s);
    }
    const totals = [...sums].map(([asset, s]) => ({ asset, debits: s.debits.toString(), credits: s.credits.toString(), balanced: s.debits === s.credits }));
    if (q.format === "csv") {
      return csvResponse(
        c,
        "trial-balance.csv",
        ["asset", "account_id", "marketplace_id", "ref", "code", "normal_side", "debits", "credits", "balance"],
        [
          ...accounts.map((a) => [a.asset, a.account_id, a.marketplace_id, a.ref, a.code, a.normal_side, a.debits, a.credits, a.balance]),
          ...totals.map((t) => [t.asset, "TOTAL", null, null, null, null, t.debits, t.credits, t.balanced ? "balanced" : "NOT BALANCED"]),
        ],
      ) as never;
    }
    return c.json({ as_of: asOf?.toISOString() ?? null, accounts, totals }, 200);
  });
}
