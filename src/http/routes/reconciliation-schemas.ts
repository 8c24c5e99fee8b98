import { z } from "@hono/zod-openapi";
import { itemStatuses } from "../../domain/reconcile.js";
import type { ItemRow, ReconciliationRun } from "../../services/reconcile.js";
import { DisplayAmount, displayOrNull } from "../display.js";
import { Timestamp, Uuid } from "../schemas.js";

export const ReconciliationOut = z
  .object({
    id: Uuid,
    chain_id: z.number().int(),
    asset: z.string(),
    from_block: z.number().int(),
    to_block: z.number().int(),
    summary: z.record(z.enum(itemStatuses), z.number().int()),
    requested_by: z.string(),
    created_at: Timestamp,
  })
  .openapi("Reconciliation");

export const runOut = (r: ReconciliationRun) => ({
  id: r.id,
  chain_id: Number(r.chainId),
  asset: r.assetCode,
  from_block: Number(r.fromBlock),
  to_block: Number(r.toBlock),
  summary: r.summary,
  requested_by: r.requestedBy,
  created_at: r.createdAt.toISOString(),
});

export const ItemOut = z
  .object({
    id: z.string(),
    status: z.enum(itemStatuses),
    direction: z.enum(["in", "out"]),
    payout_id: z.string().nullable(),
    tx_hash: z.string().nullable(),
    log_index: z.number().int().nullable(),
    block_number: z.string().nullable(),
    ledger_amount: z.string().nullable(),
    chain_amount: z.string().nullable(),
    ledger_address: z.string().nullable(),
    chain_address: z.string().nullable(),
    detail: z.string().nullable(),
    resolved_at: Timestamp.nullable(),
    resolved_by: z.string().nullable(),
    resolution_note: z.string().nullable(),
    adjustment_transfer_id: z.string().nullable(),
  })
  .openapi("ReconciliationItem");

export const itemOut = (i: ItemRow) => ({ ...i, resolved_at: i.resolved_at === null ? null : new Date(i.resolved_at).toISOString() });

/** An item as the run's read answers it: its amounts with their display twins, in the run's asset. */
export const ItemView = ItemOut.extend({ ledger_amount_display: DisplayAmount.nullable(), chain_amount_display: DisplayAmount.nullable() }).openapi(
  "ReconciliationItemView",
);

export const itemView = (i: ItemRow, scale: number) => ({
  ...itemOut(i),
  ledger_amount_display: displayOrNull(i.ledger_amount, scale),
  chain_amount_display: displayOrNull(i.chain_amount, scale),
});

export const itemColumns = [
  "id",
  "status",
  "direction",
  "payout_id",
  "tx_hash",
  "log_index",
  "block_number",
  "ledger_amount",
  "chain_amount",
  "ledger_address",
  "chain_address",
  "detail",
  "resolved_at",
  "resolved_by",
  "resolution_note",
  "adjustment_transfer_id",
  // Added later, so after the first ones: a reader by position keeps working.
  "ledger_amount_display",
  "chain_amount_display",
] as const;
