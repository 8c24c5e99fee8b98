import { z } from "@hono/zod-openapi";
import type { ConversionRow, RateRow } from "../../services/conversion-reads.js";
import type { PayoutPreference } from "../../services/payout-preferences.js";
import { formatRate } from "../../domain/conversion.js";
import { display, DisplayAmount } from "../display.js";
import { Timestamp, Uuid } from "../schemas.js";

/** Schemas of hybrid settlement's answers (docs/settlement.md): payout preferences, rates, conversions. */

const Split = z.object({ asset: z.string().openapi({ example: "TUSD" }), bps: z.number().int().openapi({ example: 7000 }) }).openapi("PayoutSplit");

export const PayoutPreferenceOut = z
  .object({
    operator_id: z.string().openapi({ example: "op-datacenter-7" }),
    asset: z.string().openapi({ example: "USD", description: "the asset the earnings are in" }),
    version: z.number().int().openapi({ description: "1 for the first preference, one more for each change", example: 2 }),
    splits: z.array(Split).openapi({ description: "the assets the earnings are paid in, by basis points (they add up to 10,000)" }),
    set_at: Timestamp,
    history: z
      .array(z.object({ version: z.number().int(), splits: z.array(Split), set_at: Timestamp }))
      .openapi({ description: "every version, newest first (the first is the one in force); a payout keeps the version in force when it was requested" }),
  })
  .openapi("PayoutPreference");

const splitsOut = (p: PayoutPreference) => p.splits.map((s) => ({ asset: s.asset, bps: s.bps }));

/** The preference in force (the first of `history`, newest first) with its history. */
export const preferenceOut = (history: PayoutPreference[]) => {
  const current = history[0]!;
  return {
    operator_id: current.operatorId,
    asset: current.asset,
    version: current.version,
    splits: splitsOut(current),
    set_at: current.setAt.toISOString(),
    history: history.map((p) => ({ version: p.version, splits: splitsOut(p), set_at: p.setAt.toISOString() })),
  };
};

const RateValue = z
  .string()
  .openapi({ example: "2.5", description: "whole `quote` units one whole `base` unit is worth, as a decimal (rounded half-up at 18 decimals)" });
const Integer = (description: string) => z.string().openapi({ example: "5", description });

export const RateOut = z
  .object({
    id: Uuid,
    base: z.string().openapi({ example: "NET" }),
    quote: z.string().openapi({ example: "USD" }),
    value: RateValue,
    num: Integer("the rate exactly: num / den whole `quote` units per whole `base` unit"),
    den: Integer("the rate's denominator"),
    observed_at: Timestamp,
    source: z
      .enum(["feed", "manual"])
      .openapi({ description: "feed: a round of an on-chain price feed; manual: entered by finance and approved by a second key" }),
    source_ref: z.string().openapi({
      description: "feed: `{chain_id}:{feed address}:{round id}`; manual: the approved proposal's id",
      example: "31337:0x5fbdb2315678afecb367f032d93f642f64180aa3:42",
    }),
    recorded_at: Timestamp,
  })
  .openapi("Rate");

const iso = (t: Date | string) => new Date(t).toISOString();

export const rateOut = (r: RateRow) => ({
  id: r.id,
  base: r.base,
  quote: r.quote,
  value: formatRate({ num: BigInt(r.num), den: BigInt(r.den) }),
  num: r.num,
  den: r.den,
  observed_at: iso(r.observed_at),
  source: r.source,
  source_ref: r.source_ref,
  recorded_at: iso(r.recorded_at),
});

const Amount = (description: string) => z.string().openapi({ example: "700000000", description });

export const ConversionOut = z
  .object({
    id: Uuid,
    payout_id: Uuid.openapi({ description: "the convert payout whose amount was converted" }),
    child_payout_id: Uuid.nullable().openapi({ description: "the payout that pays this part in `to_asset`" }),
    operator_id: z.string().openapi({ example: "op-datacenter-7" }),
    from_asset: z.string().openapi({ example: "USD", description: "the earnings asset" }),
    to_asset: z.string().openapi({ example: "NET", description: "the asset this part is paid in" }),
    bps: z.number().int().openapi({ example: 3000, description: "this part's share of the payout, in basis points" }),
    part: Amount("this part of the payout, in `from_asset`'s smallest units"),
    part_display: DisplayAmount,
    used: Amount("what of the part bought `to_amount` (smallest units of `from_asset`)"),
    used_display: DisplayAmount,
    remainder: Amount("what of the part `to_amount` could not use (less than one smallest unit of `to_asset`): it stayed in the operator's payable"),
    remainder_display: DisplayAmount,
    to_amount: Amount("what the part bought, in `to_asset`'s smallest units (rounded down)"),
    to_amount_display: DisplayAmount,
    rate: RateValue.openapi({ description: "the rate applied: whole `to_asset` per whole `from_asset`, as a decimal" }),
    rate_id: Uuid.nullable().openapi({ description: "the rate it came from (GET /v1/rates); null when both assets are one" }),
    rate_source: z.enum(["feed", "manual"]).nullable(),
    rate_observed_at: Timestamp.nullable(),
    rate_lock_id: Uuid.nullable().openapi({
      description: "the rate lock this slice used (GET /v1/rate-locks): earnings of a marketplace that locks the rate at earning; null: the rate of the moment",
    }),
    revaluation: Amount(
      "what marking the platform's position in `to_asset` to this rate booked, in `from_asset`'s smallest units: a loss when positive, a gain when negative",
    ),
    revaluation_display: DisplayAmount,
    transfer_id: Uuid.openapi({ description: "the ledger transfer that booked the conversion" }),
    converted_at: Timestamp,
    value_in_from_asset: Amount(
      "what the part paid in `to_asset` was worth in `from_asset` when converted: `used`, the same integer (smallest units of `from_asset`)",
    ),
    value_in_from_asset_display: DisplayAmount,
  })
  .openapi("Conversion");

export const conversionOut = (r: ConversionRow) => ({
  id: r.id,
  payout_id: r.payout_id,
  child_payout_id: r.child_payout_id,
  operator_id: r.operator_id,
  from_asset: r.from_asset,
  to_asset: r.to_asset,
  bps: r.bps,
  part: r.part,
  part_display: display(r.part, r.from_scale),
  used: r.used,
  used_display: display(r.used, r.from_scale),
  remainder: r.remainder,
  remainder_display: display(r.remainder, r.from_scale),
  to_amount: r.to_amount,
  to_amount_display: display(r.to_amount, r.to_scale),
  rate: formatRate({ num: BigInt(r.rate_num), den: BigInt(r.rate_den) }),
  rate_id: r.rate_id,
  rate_source: r.rate_source,
  rate_observed_at: r.rate_observed_at === null ? null : iso(r.rate_observed_at),
  rate_lock_id: r.rate_lock_id,
  revaluation: r.revaluation,
  revaluation_display: display(r.revaluation, r.from_scale),
  transfer_id: r.transfer_id,
  converted_at: iso(r.converted_at),
  value_in_from_asset: r.used,
  value_in_from_asset_display: display(r.used, r.from_scale),
});
