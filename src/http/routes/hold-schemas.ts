import { z } from "@hono/zod-openapi";
import type { Hold } from "../../services/holds.js";
import { display, DisplayAmount } from "../display.js";
import { Timestamp, Uuid } from "../schemas.js";

export const HoldOut = z
  .object({
    id: Uuid,
    marketplace_id: z.string().openapi({ example: "gpu-market" }),
    customer_id: z.string().openapi({ example: "acme-ai" }),
    asset_id: Uuid,
    amount: z.string().openapi({ example: "10000000" }),
    amount_display: DisplayAmount,
    remaining: z.string().openapi({ description: "left in escrow now", example: "7501600" }),
    remaining_display: DisplayAmount,
    status: z.enum(["open", "closed", "expired"]),
    expires_at: Timestamp.nullable(),
    closed_at: Timestamp.nullable(),
    open_transfer_id: Uuid,
    close_transfer_id: Uuid.nullable(),
    created_at: Timestamp,
  })
  .openapi("Hold");

export const holdOut = (h: Hold) => ({
  id: h.id,
  marketplace_id: h.marketplaceId,
  customer_id: h.customerId,
  asset_id: h.assetId,
  amount: h.amount.toString(),
  amount_display: display(h.amount, h.assetScale),
  remaining: h.remaining.toString(),
  remaining_display: display(h.remaining, h.assetScale),
  status: h.status,
  expires_at: h.expiresAt?.toISOString() ?? null,
  closed_at: h.closedAt?.toISOString() ?? null,
  open_transfer_id: h.openTransferId,
  close_transfer_id: h.closeTransferId,
  created_at: h.createdAt.toISOString(),
});
