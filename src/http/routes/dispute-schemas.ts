import { z } from "@hono/zod-openapi";
import type { Dispute } from "../../domain/disputes.js";
import { DISPUTE_STATUSES } from "../../domain/disputes.js";
import { display, DisplayAmount } from "../display.js";

/** A dispute as the API answers it (an operator key sees only its own records in it). */
export const DisputeOut = z
  .object({
    id: z.string(),
    marketplace_id: z.string(),
    status: z.enum(DISPUTE_STATUSES).openapi({ description: "open (its records' earnings held), upheld (its records reversed) or rejected (released)" }),
    reason: z.string(),
    opened_by: z.string().openapi({ description: "the API key that opened it" }),
    opened_at: z.string(),
    decided_by: z.string().nullable().openapi({ description: "the finance or admin key that upheld or rejected it" }),
    decided_at: z.string().nullable(),
    decision_note: z.string().nullable(),
    records: z.array(
      z.object({
        usage_id: z.string(),
        external_id: z.string(),
        operator_id: z.string(),
        asset: z.string(),
        gross: z.string().openapi({ description: "what the customer was charged (refunded when the dispute is upheld)" }),
        gross_display: DisplayAmount,
        net: z.string().openapi({ description: "the operator's earnings of the record: held while the dispute is open" }),
        net_display: DisplayAmount,
        usage_status: z.enum(["posted", "reversed"]),
      }),
    ),
    held: z
      .array(z.object({ operator_id: z.string(), asset: z.string(), amount: z.string(), amount_display: DisplayAmount }))
      .openapi({ description: "while open: per operator and asset, the earnings it holds (not payable until decided); empty once decided" }),
  })
  .openapi("Dispute");

export function disputeOut(d: Dispute): z.infer<typeof DisputeOut> {
  const held = new Map<string, { operator_id: string; asset: string; amount: bigint; scale: number }>();
  if (d.status === "open") {
    for (const i of d.items) {
      const k = `${i.operatorId}|${i.asset}`;
      const h = held.get(k) ?? { operator_id: i.operatorId, asset: i.asset, amount: 0n, scale: i.scale };
      h.amount += i.net;
      held.set(k, h);
    }
  }
  return {
    id: d.id,
    marketplace_id: d.marketplaceId,
    status: d.status,
    reason: d.reason,
    opened_by: d.openedBy,
    opened_at: d.openedAt.toISOString(),
    decided_by: d.decidedBy,
    decided_at: d.decidedAt?.toISOString() ?? null,
    decision_note: d.decisionNote,
    records: d.items.map((i) => ({
      usage_id: i.usageId,
      external_id: i.externalId,
      operator_id: i.operatorId,
      asset: i.asset,
      gross: i.gross.toString(),
      gross_display: display(i.gross, i.scale),
      net: i.net.toString(),
      net_display: display(i.net, i.scale),
      usage_status: i.usageStatus,
    })),
    held: [...held.values()].map((h) => ({
      operator_id: h.operator_id,
      asset: h.asset,
      amount: h.amount.toString(),
      amount_display: display(h.amount, h.scale),
    })),
  };
}

/** The free text of a dispute's reason or decision note. */
export const DisputeText = z
  .string()
  .min(1)
  .max(2000)
  .regex(/^[^\u0000]*$/, "must not contain NUL characters")
  .openapi({ example: "customer acme-ai: job failed after 10 minutes, billed for the hour" });
