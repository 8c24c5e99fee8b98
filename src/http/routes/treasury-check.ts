import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { treasuryCheck } from "../../services/reconcile.js";
import { requireRole } from "../auth.js";
import { display, DisplayAmount } from "../display.js";
import type { AppEnv } from "../request-context.js";
import { AssetCode } from "../money-schemas.js";
import { errorResponses, json, security } from "./common.js";

const Out = z
  .object({
    chain_id: z.number().int(),
    asset: z.string(),
    on_chain: z
      .object({
        vault: z.string(),
        vault_display: DisplayAmount,
        signer: z.string(),
        signer_display: DisplayAmount,
        total: z.string(),
        total_display: DisplayAmount,
      })
      .openapi({ description: "what the treasury holds on chain: the vault and the signer's wallet" }),
    ledger: z.string().openapi({ description: "the ledger's treasury account (debits less credits)" }),
    ledger_display: DisplayAmount,
    in_flight: z.object({
      payouts: z.number().int(),
      amount: z.string(),
      amount_display: DisplayAmount,
      mined_amount: z.string().openapi({ description: "of which the chain shows already paid (mined, not yet confirmed)" }),
      mined_amount_display: DisplayAmount,
      mined_gas: z.string().openapi({ description: "gas those transactions cost (native asset only)" }),
      mined_gas_display: DisplayAmount,
    }),
    expected_on_chain: z.string(),
    expected_on_chain_display: DisplayAmount,
    unexplained: z.string().openapi({ description: "on chain less expected: funding or outflows the ledger has not recorded" }),
    unexplained_display: DisplayAmount,
    pending: z.object({
      payouts: z.number().int(),
      amount: z.string(),
      amount_display: DisplayAmount,
      shortfall: z
        .string()
        .openapi({ description: "what the vault lacks to pay every pending payout after those in flight: fund it by this much (0: nothing waits for funds)" }),
      shortfall_display: DisplayAmount,
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
  request: {
    query: z.strictObject({
      chain_id: z
        .string()
        .regex(/^[1-9][0-9]{0,15}$/, "must be a chain id")
        .openapi({ example: "8453" }),
      asset: AssetCode,
    }),
  },
  responses: { 200: json(Out, "the comparison"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const deps = c.get("deps");
    const t = await treasuryCheck(deps.ledger.db, deps.settlements, BigInt(q.chain_id), q.asset);
    const d = (units: bigint) => display(units, t.scale);
    return c.json(
      {
        chain_id: Number(t.chainId),
        asset: t.asset,
        on_chain: {
          vault: t.onChain.vault.toString(),
          vault_display: d(t.onChain.vault),
          signer: t.onChain.signer.toString(),
          signer_display: d(t.onChain.signer),
          total: t.onChain.total.toString(),
          total_display: d(t.onChain.total),
        },
        ledger: t.ledger.toString(),
        ledger_display: d(t.ledger),
        in_flight: {
          payouts: t.inFlight.payouts,
          amount: t.inFlight.amount.toString(),
          amount_display: d(t.inFlight.amount),
          mined_amount: t.inFlight.minedAmount.toString(),
          mined_amount_display: d(t.inFlight.minedAmount),
          mined_gas: t.inFlight.minedGas.toString(),
          mined_gas_display: d(t.inFlight.minedGas),
        },
        expected_on_chain: t.expectedOnChain.toString(),
        expected_on_chain_display: d(t.expectedOnChain),
        unexplained: t.unexplained.toString(),
        unexplained_display: d(t.unexplained),
        pending: {
          payouts: t.pending.payouts,
          amount: t.pending.amount.toString(),
          amount_display: d(t.pending.amount),
          shortfall: t.pending.shortfall.toString(),
          shortfall_display: d(t.pending.shortfall),
        },
      },
      200,
    );
  });
}
