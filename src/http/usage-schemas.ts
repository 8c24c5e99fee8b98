import { z } from "@hono/zod-openapi";
import type { UsageRecord } from "../domain/usage.js";
import { display, DisplayAmount } from "./display.js";
import { Amount, AssetCode } from "./money-schemas.js";
import { CustomerId, OperatorId } from "./routes/party-schemas.js";
import { Metadata, Timestamp, Uuid } from "./schemas.js";

export const DecimalText = z
  .string({ error: (i) => (i.input === undefined ? "is required" : 'must be a decimal number as a string, e.g. "3600" or "0.000694"') })
  .regex(/^(0|[1-9][0-9]{0,39})(\.[0-9]{1,18})?$/, 'must be a non-negative decimal as a string with at most 18 decimals, e.g. "0.000694"')
  .refine((v) => v.replace(".", "").length <= 40, "must have at most 40 digits in all");

const UsageFields = z.strictObject({
  external_id: z
    .string()
    .regex(/^[\x21-\x7e]{1,200}$/, "must be 1-200 printable characters without spaces")
    .openapi({ example: "job-42:hour-7" }),
  operator_id: OperatorId,
  customer_id: CustomerId,
  resource: z
    .string()
    .regex(/^[a-z0-9][a-z0-9:._-]{0,99}$/, "must be 1-100 characters of a-z, 0-9, ':', '.', '_' or '-'")
    .openapi({ example: "gpu:h100-80gb" }),
  unit: z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,31}$/, "must be 1-32 characters of a-z, 0-9 or '_'")
    .openapi({ example: "gpu_second" }),
  quantity: DecimalText.openapi({ example: "3600" }),
  unit_price: DecimalText.optional().openapi({ description: "price per unit in the asset's display units (e.g. USDC)", example: "0.000694" }),
  amount: Amount.optional().openapi({ description: "total in the asset's smallest unit, instead of unit_price" }),
  asset: AssetCode.openapi({ example: "USDC" }),
  period_start: Timestamp,
  period_end: Timestamp,
  hold_id: Uuid.optional().openapi({ description: "charge an open hold of this customer instead of its balance" }),
  metadata: Metadata.optional(),
});

const isTimestamp = (v: string) => Timestamp.safeParse(v).success;

const checked = <T extends z.ZodType<{ unit_price?: string; amount?: string; period_start: string; period_end: string }>>(schema: T) =>
  schema
    .refine((u) => (u.unit_price === undefined) !== (u.amount === undefined), { message: "give either unit_price or amount", path: ["unit_price"] })
    // Compared only when both are valid date-times: a malformed one is named on its own, not also as out of order.
    .refine((u) => !isTimestamp(u.period_start) || !isTimestamp(u.period_end) || Date.parse(u.period_start) <= Date.parse(u.period_end), {
      message: "must not be after period_end",
      path: ["period_start"],
    });

export const UsageIn = checked(UsageFields).openapi("UsageCreate");
export type UsageIn = z.infer<typeof UsageFields>;

/** A single record posted on its own may name the marketplace (admin keys). */
export const SingleUsageIn = checked(
  UsageFields.extend({
    marketplace_id: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/)
      .optional()
      .openapi({ description: "admin keys only", example: "gpu-market" }),
  }),
).openapi("UsageCreateSingle");

/** A usage record as every answer gives it (the writes that record it and the reads), each amount with its display twin. */
export const UsageRecordOut = z
  .object({
    id: Uuid,
    marketplace_id: z.string().openapi({ example: "gpu-market" }),
    external_id: z.string().openapi({ example: "job-42:hour-7" }),
    operator_id: z.string().openapi({ example: "op-datacenter-7" }),
    customer_id: z.string().openapi({ example: "acme-ai" }),
    resource: z.string().openapi({ example: "gpu:h100-80gb" }),
    unit: z.string().openapi({ example: "gpu_second" }),
    quantity: z.string().openapi({ example: "3600" }),
    unit_price: z.string().nullable().openapi({ example: "0.000694" }),
    asset_id: Uuid,
    gross: z.string().openapi({ example: "2498400" }),
    gross_display: DisplayAmount.openapi({ example: "2.4984" }),
    net: z.string().openapi({ example: "2223576" }),
    net_display: DisplayAmount.openapi({ example: "2.223576" }),
    fees: z.array(
      z.object({
        party: z.string().openapi({ example: "marketplace" }),
        account_id: Uuid,
        amount: z.string().openapi({ example: "249840" }),
        amount_display: DisplayAmount.openapi({ example: "0.24984" }),
      }),
    ),
    fee_schedule_version: z.number().int().nullable(),
    period_start: Timestamp,
    period_end: Timestamp,
    effective_at: Timestamp,
    transfer_id: Uuid,
    hold_id: Uuid.nullable(),
    status: z.enum(["posted", "reversed"]),
    metadata: Metadata,
    created_at: Timestamp,
  })
  .openapi("UsageRecord");

export const toUsageInput = (u: UsageIn) => ({
  externalId: u.external_id,
  operatorId: u.operator_id,
  customerId: u.customer_id,
  resource: u.resource,
  unit: u.unit,
  quantity: u.quantity,
  unitPrice: u.unit_price,
  amount: u.amount,
  asset: u.asset,
  periodStart: new Date(u.period_start),
  periodEnd: new Date(u.period_end),
  holdId: u.hold_id,
  metadata: u.metadata,
});

/**
 * A record in the API's shape, its amounts' twins at `scale`, its asset's. Pure and synchronous: a
 * write's answer is made with it in the write's transaction (the scale looked up before).
 */
export const usageOut = (r: UsageRecord, scale: number) => ({
  id: r.id,
  marketplace_id: r.marketplaceId,
  external_id: r.externalId,
  operator_id: r.operatorId,
  customer_id: r.customerId,
  resource: r.resource,
  unit: r.unit,
  quantity: r.quantity,
  unit_price: r.unitPrice,
  asset_id: r.assetId,
  gross: r.gross.toString(),
  gross_display: display(r.gross, scale),
  net: r.net.toString(),
  net_display: display(r.net, scale),
  fees: r.fees.map((f) => ({ party: f.party, account_id: f.accountId, amount: f.amount.toString(), amount_display: display(f.amount, scale) })),
  fee_schedule_version: r.feeScheduleVersion,
  period_start: r.periodStart.toISOString(),
  period_end: r.periodEnd.toISOString(),
  effective_at: r.effectiveAt.toISOString(),
  transfer_id: r.transferId,
  hold_id: r.holdId,
  status: r.status,
  metadata: r.metadata,
  created_at: r.createdAt.toISOString(),
});
