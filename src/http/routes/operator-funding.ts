import { z } from "@hono/zod-openapi";
import type { Queryable } from "../../services/context.js";
import { operatorBalances } from "../../services/reads.js";
import { marketplaceIdsOfOperator, payableNow, withheldEarnings } from "../../services/funding.js";
import { display, DisplayAmount } from "../display.js";

/** An operator's available balance in an asset, split into what can be paid now and what waits for money. */
export const FundingSplit = z
  .object({
    asset_id: z.string(),
    asset: z.string(),
    available: z.string().openapi({ description: "owed to the operator and not held for a payout: earned, whether or not its money has been received" }),
    available_display: DisplayAmount,
    payable_now: z.string().openapi({ description: "the part of available that can be paid out now: earnings whose money has been received" }),
    payable_now_display: DisplayAmount,
    awaiting_funds: z.string().openapi({
      description: "the part of available that waits for money from marketplaces (their customers' off-chain deposits and postpaid usage not yet settled)",
    }),
    awaiting_funds_display: DisplayAmount,
    awaiting_funds_by_marketplace: z.array(z.object({ marketplace_id: z.string(), amount: z.string(), amount_display: DisplayAmount })),
    held_by_disputes: z.string().openapi({
      description:
        "the net of the operator's usage records in open disputes (GET /v1/disputes): not payable until the disputes are decided (part of it may also await funds, or have been paid out before the dispute was opened)",
    }),
    held_by_disputes_display: DisplayAmount,
    receivable: z.string().openapi({
      description:
        "what the operator owes the platform (usage it was already paid for, reversed afterwards): recovered from its next earnings before anything else is payable",
    }),
    receivable_display: DisplayAmount,
  })
  .openapi("OperatorFundingSplit");

export type FundingSplitOut = z.infer<typeof FundingSplit>;

/** The split now, per asset the operator has a payable in, with the rows it was computed from. */
export async function fundingSplits(
  db: Queryable,
  operatorId: string,
): Promise<Array<{ split: FundingSplitOut; row: Awaited<ReturnType<typeof operatorBalances>>[number] }>> {
  // Independent reads, sent together: the balances and the marketplaces whose funding is judged.
  const [rows, markets] = await Promise.all([operatorBalances(db, operatorId), marketplaceIdsOfOperator(db, operatorId)]);
  return Promise.all(
    rows.map(async (r) => {
      const available = BigInt(r.credits_posted) - BigInt(r.debits_posted) - BigInt(r.debits_pending);
      // Shown, not acted on: the judgment may take its one-row shortcut (src/services/funding.ts).
      const withheld = await withheldEarnings(db, operatorId, r.asset_id, { shown: true, markets });
      const awaiting = withheld.awaiting;
      const now = payableNow(available, withheld);
      const waiting = available < awaiting.total ? (available > 0n ? available : 0n) : awaiting.total;
      return {
        row: r,
        split: {
          asset_id: r.asset_id,
          asset: r.asset_code,
          available: available.toString(),
          available_display: display(available, r.scale),
          payable_now: now.toString(),
          payable_now_display: display(now, r.scale),
          awaiting_funds: waiting.toString(),
          awaiting_funds_display: display(waiting, r.scale),
          awaiting_funds_by_marketplace: awaiting.byMarketplace.map((m) => ({
            marketplace_id: m.marketplaceId,
            amount: m.amount.toString(),
            amount_display: display(m.amount, r.scale),
          })),
          held_by_disputes: withheld.disputed.toString(),
          held_by_disputes_display: display(withheld.disputed, r.scale),
          receivable: withheld.receivable.toString(),
          receivable_display: display(withheld.receivable, r.scale),
        },
      };
    }),
  );
}
