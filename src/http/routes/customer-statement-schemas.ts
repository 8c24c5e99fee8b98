import { z } from "@hono/zod-openapi";
import type { CustomerStatementLine as StatementLine, CustomerStatementTotals, StatementParty } from "../../services/customer-statements.js";
import { display, DisplayAmount, displayOrNull } from "../display.js";
import { SignedAmount } from "../money-schemas.js";
import { Timestamp, Uuid } from "../schemas.js";

/** The shapes of a customer's statement (GET /v1/customers/{id}/statement), in JSON and CSV. */

export const StatementLineType = z.enum(["deposit", "usage", "refund", "other"]).openapi({
  description:
    "deposit: money in (on chain, a receipt finance recorded, or a deposit the marketplace recorded); usage: a usage record charged; refund: a usage record reversed; other: any other movement (e.g. a conversion into the pricing currency)",
});

export const CustomerStatementLine = z
  .object({
    type: StatementLineType,
    asset: z.string().openapi({ example: "USDC" }),
    asset_id: Uuid,
    transfer_id: Uuid,
    effective_at: Timestamp,
    booked_at: Timestamp,
    amount: SignedAmount.openapi({ description: "signed: + to the customer (deposits, refunds), − from it (usage)" }),
    amount_display: DisplayAmount,
    description: z.string().openapi({ example: "gpu:h100-80gb" }),
    deposit_source: z.enum(["chain", "receipt", "marketplace"]).nullable().openapi({ description: "deposits: where the money came from; null otherwise" }),
    reference: z.string().nullable().openapi({ description: "a chain deposit's transaction hash, or a receipt's reference; null otherwise" }),
    usage_record_id: Uuid.nullable().openapi({ description: "usage and refund lines: the usage record" }),
    external_id: z.string().nullable().openapi({ description: "usage and refund lines: the marketplace's id of the record" }),
    resource: z.string().nullable().openapi({ example: "gpu:h100-80gb" }),
    unit: z.string().nullable().openapi({ example: "gpu_second" }),
    quantity: z.string().nullable().openapi({ example: "3600" }),
    unit_price: z
      .string()
      .nullable()
      .openapi({ description: "price per unit in display units, as the marketplace gave it; null when it gave the amount", example: "0.000694" }),
    rate: z.string().nullable().openapi({ description: "gross per unit of quantity in smallest units, rounded down", example: "694" }),
    rate_display: DisplayAmount.nullable(),
    gross: z.string().nullable().openapi({ description: "usage and refund lines: what the record charged (the amount's size)", example: "2498400" }),
    gross_display: DisplayAmount.nullable(),
  })
  .openapi("CustomerStatementLine");

const amounts = ["opening", "deposits", "usage", "refunds", "other", "closing", "closing_held"] as const;

export const CustomerStatementAsset = z
  .object({
    asset: z.string().openapi({ example: "USDC" }),
    asset_id: Uuid,
    opening: SignedAmount.openapi({ description: "the balance from the entries effective before `from`" }),
    opening_display: DisplayAmount,
    deposits: SignedAmount.openapi({ description: "the sum of the period's deposit lines" }),
    deposits_display: DisplayAmount,
    usage: SignedAmount.openapi({ description: "the sum of the period's usage lines (negative: charged)" }),
    usage_display: DisplayAmount,
    refunds: SignedAmount.openapi({ description: "the sum of the period's refund lines" }),
    refunds_display: DisplayAmount,
    other: SignedAmount.openapi({ description: "the sum of the period's other lines" }),
    other_display: DisplayAmount,
    closing: SignedAmount.openapi({
      description: "the balance from the entries effective before `to`: opening + deposits + usage + refunds + other",
    }),
    closing_display: DisplayAmount,
    closing_held: SignedAmount.openapi({ description: "the part of `closing` in the customer's holds" }),
    closing_held_display: DisplayAmount,
    lines: z.number().int().openapi({ description: "the period's lines in the asset (on every page: all of them)" }),
  })
  .openapi("CustomerStatementAsset");

export const CustomerStatement = z
  .object({
    marketplace_id: z.string().openapi({ example: "gpu-market" }),
    marketplace_name: z.string().openapi({ example: "GPU Market" }),
    customer_id: z.string().openapi({ example: "acme-ai" }),
    billing: z.enum(["prepaid", "postpaid"]),
    from: Timestamp,
    to: Timestamp,
    period: z.string().nullable().openapi({ description: "the month asked for (in the marketplace's time zone), or null when asked by from and to" }),
    generated_at: Timestamp.openapi({ description: "the service clock's instant when the statement was read" }),
    assets: z.array(CustomerStatementAsset).openapi({ description: "per asset with a balance or a line, by asset code: the whole period's sums" }),
    data: z.array(CustomerStatementLine).openapi({ description: "this page's lines: by asset code, then effective time, then recording order" }),
    next_cursor: z.string().nullable(),
    limit: z.number().int().openapi({ description: "the most lines a page holds (the `limit` asked for, or 100)" }),
  })
  .openapi("CustomerStatement");

export function statementLineOut(l: StatementLine) {
  const u = l.usage;
  return {
    type: l.type,
    asset: l.asset,
    asset_id: l.assetId,
    transfer_id: l.transferId,
    effective_at: l.effectiveAt.toISOString(),
    booked_at: l.bookedAt.toISOString(),
    amount: l.amount.toString(),
    amount_display: display(l.amount, l.scale),
    description: l.description,
    deposit_source: l.depositSource,
    reference: l.reference,
    usage_record_id: u?.id ?? null,
    external_id: u?.externalId ?? null,
    resource: u?.resource ?? null,
    unit: u?.unit ?? null,
    quantity: u?.quantity ?? null,
    unit_price: u?.unitPrice ?? null,
    rate: u?.rateUnits?.toString() ?? null,
    rate_display: displayOrNull(u?.rateUnits, l.scale),
    gross: u?.gross.toString() ?? null,
    gross_display: displayOrNull(u?.gross, l.scale),
  };
}

export type StatementLineOut = ReturnType<typeof statementLineOut>;

export function statementAssetOut(t: CustomerStatementTotals) {
  const values: Record<(typeof amounts)[number], bigint> = {
    opening: t.opening,
    deposits: t.deposits,
    usage: t.usage,
    refunds: t.refunds,
    other: t.other,
    closing: t.closing,
    closing_held: t.closingHeld,
  };
  const out = Object.fromEntries(
    amounts.flatMap((k) => [
      [k, values[k].toString()],
      [`${k}_display`, display(values[k], t.scale)],
    ]),
  ) as Record<(typeof amounts)[number] | `${(typeof amounts)[number]}_display`, string>;
  return { asset: t.asset, asset_id: t.assetId, ...out, lines: t.lines };
}

export type StatementAssetOut = ReturnType<typeof statementAssetOut>;

/** The statement's heading: whose, which period, when read. */
export const statementHeading = (p: StatementParty, period: { from: Date; to: Date; period: string | null }, generatedAt: Date) => ({
  marketplace_id: p.marketplace.id,
  marketplace_name: p.marketplace.name,
  customer_id: p.customer.id,
  billing: p.customer.billing,
  from: period.from.toISOString(),
  to: period.to.toISOString(),
  period: period.period,
  generated_at: generatedAt.toISOString(),
});

export type StatementHeading = ReturnType<typeof statementHeading>;

/** The CSV's columns: one row per line, the same fields as the JSON's lines. */
export const STATEMENT_CSV_COLUMNS = [
  "asset",
  "type",
  "effective_at",
  "booked_at",
  "amount",
  "amount_display",
  "description",
  "deposit_source",
  "reference",
  "usage_record_id",
  "external_id",
  "resource",
  "unit",
  "quantity",
  "unit_price",
  "rate",
  "rate_display",
  "gross",
  "gross_display",
  "transfer_id",
  "asset_id",
] as const satisfies readonly (keyof StatementLineOut)[];
