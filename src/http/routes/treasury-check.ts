import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { treasuryCheck } from "../../services/reconcile.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { AssetCode } from "../money-schemas.js";
import { errorResponses, json, security } from "./common.js";

const Out = z
  .object({
    chain_id: z.number().int(),
    asset: z.string(),
    on_chain: z
      .object({ vault: z.string(), signer: z.string(), total: z.string() })
      .openapi({ description: "what the treasury holds on chain: the vault and the signer's wallet" }),
    ledger: z.string().openapi({ description: "the ledger's treasury account (debits less credits)" }),
    in_flight: z.object({
      payouts: z.number().int(),
      amount: z.string(),
      mined_amount: z.string().openapi({ description: "of which the chain shows already paid (mined, not yet confirmed)" }),
      mined_gas: z.string().openapi({ description: "gas those transactions cost (native asset only)" }),
    }),
    expected_on_chain: z.string(),
    unexplained: z.string().openapi({ description: "on chain less expected: funding or outflows the ledger has not recorded" }),
    pending: z.object({
      payouts: z.number().int(),
      amount: z.string(),
      shortfall: z
        .string()
        .openapi({ description: "what the vault lacks to pay every pending payout after those in flight: fund it by this much (0: nothing waits for funds)" }),
    }),
  })
  .openapi("TreasuryCheck");

const route = createRoute({
  method: "get",
  path: "/v1/treasury",
  operationId: "checkTreasury",
  tags: ["reconciliation"],
  summary: "The treasury's on-chain balance against its ledger account, with payouts in flight explained (admin, finance)",
  security,
  middleware: [requireRole("admin", "finance")] as const,
  request: { query: z.strictObject({ chain_id: z.string().regex(/^[1-9][0-9]{0,15}$/, "must be a chain id"), asset: AssetCode }) },
  responses: { 200: json(Out, "the comparison"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const deps = c.get("deps");
    const t = await treasuryCheck(deps.ledger.db, deps.settlements, BigInt(q.chain_id), q.asset);
    return c.json(
      {
        chain_id: Number(t.chainId),
        asset: t.asset,
        on_chain: { vault: t.onChain.vault.toString(), signer: t.onChain.signer.toString(), total: t.onChain.total.toString() },
        ledger: t.ledger.toString(),
        in_flight: {
          payouts: t.inFlight.payouts,
          amount: t.inFlight.amount.toString(),
          mined_amount: t.inFlight.minedAmount.toString(),
          mined_gas: t.inFlight.minedGas.toString(),
        },
        expected_on_chain: t.expectedOnChain.toString(),
        unexplained: t.unexplained.toString(),
        pending: { payouts: t.pending.payouts, amount: t.pending.amount.toString(), shortfall: t.pending.shortfall.toString() },
      },
      200,
    );
  });
}
