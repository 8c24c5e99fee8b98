import type { Queryable } from "../db/client.js";
import { conversionPositions, conversionTotals, pricingAssetCodes, type ConversionTotalsRow } from "../db/queries/conversion-reports.js";
import { latestRate } from "../db/queries/conversions.js";
import { getAssetByCode } from "../db/queries/assets.js";
import { formatRate, invertRate, valueOf, type Rate } from "../domain/conversion.js";

/**
 * Reports of hybrid settlement (docs/settlement.md, "Reports"): what was converted, at which rates
 * and from which sources, and the platform's position in each asset with its value in the
 * earnings asset and the gains and losses booked.
 */

export interface PairTotals {
  operatorId: string | null;
  from: { code: string; scale: number };
  to: { code: string; scale: number };
  conversions: number;
  part: bigint;
  used: bigint;
  remainder: bigint;
  toAmount: bigint;
  revaluation: bigint;
  /** Whole `to` per whole `from` over all of them: Σ to ÷ Σ used (null when nothing was used). */
  averageRate: string | null;
  bySource: { feed: number; manual: number };
  firstAt: Date;
  lastAt: Date;
}

const toTotals = (r: ConversionTotalsRow): PairTotals => {
  const used = BigInt(r.used);
  const to = BigInt(r.to_amount);
  const rate: Rate | null = used === 0n || to === 0n ? null : { num: to * 10n ** BigInt(r.from_scale), den: used * 10n ** BigInt(r.to_scale) };
  return {
    operatorId: r.operator_id,
    from: { code: r.from_asset, scale: r.from_scale },
    to: { code: r.to_asset, scale: r.to_scale },
    conversions: Number(r.conversions),
    part: BigInt(r.part),
    used,
    remainder: BigInt(r.remainder),
    toAmount: to,
    revaluation: BigInt(r.revaluation),
    averageRate: rate === null ? null : formatRate(rate),
    bySource: { feed: Number(r.feed), manual: Number(r.manual) },
    firstAt: new Date(r.first_at),
    lastAt: new Date(r.last_at),
  };
};

/** What an operator's earnings were paid in, per pair, in [from, to). */
export async function paidInByOperator(db: Queryable, operatorId: string, from: Date, to: Date): Promise<PairTotals[]> {
  return (await conversionTotals(db, { operatorId, from, to, byOperator: false })).map(toTotals);
}

export interface Position {
  /** The earnings asset the position was bought with, and the asset held (negative: given out). */
  pricing: { code: string; scale: number };
  asset: { code: string; scale: number };
  position: bigint;
  /** What the position stands at in the pricing asset's books (its cost, marked to the last rate a conversion used). */
  book: bigint;
  /** The latest stored rate of the pair (whole pricing per whole asset), and the position's worth at it. */
  latestRate: string | null;
  valueAtLatest: bigint | null;
  /** valueAtLatest + book: what marking the position to the latest rate would book (negative: a loss). */
  unrealised: bigint | null;
}

export interface ConversionReport {
  pairs: PairTotals[];
  positions: Position[];
  gainsLosses: { asset: string; scale: number; net: bigint }[];
}

/** A position with its worth at the latest stored rate of the pair (either source). */
async function positionOf(db: Queryable, pricingCode: string, assetCode: string, position: bigint, book: bigint, now: Date): Promise<Position> {
  const [pricing, asset] = [(await getAssetByCode(db, pricingCode))!, (await getAssetByCode(db, assetCode))!];
  const [feed, manual] = [await latestRate(db, asset.id, pricing.id, "feed", now), await latestRate(db, asset.id, pricing.id, "manual", now)];
  const latest = [feed, manual].filter((x) => x !== undefined).sort((a, b) => new Date(b!.observed_at).getTime() - new Date(a!.observed_at).getTime())[0];
  const stored = latest && { num: BigInt(latest.num), den: BigInt(latest.den) };
  const rate = stored && (latest!.base_asset_id === asset.id ? stored : invertRate(stored));
  const value = rate ? valueOf(position, asset.scale, pricing.scale, rate) : null;
  return {
    pricing: { code: pricing.code, scale: pricing.scale },
    asset: { code: asset.code, scale: asset.scale },
    position,
    book,
    latestRate: rate ? formatRate(rate) : null,
    valueAtLatest: value,
    unrealised: value === null ? null : value + book,
  };
}

/** The finance report of conversions in [from, to), with the platform's positions now. */
export async function conversionReport(db: Queryable, from: Date, to: Date, now: Date): Promise<ConversionReport> {
  const pairs = (await conversionTotals(db, { from, to, byOperator: false })).map(toTotals);
  const rows = await conversionPositions(db);
  const net = new Map(rows.map((r) => [`${r.asset}|${r.ref}`, r]));
  const pricingCodes = await pricingAssetCodes(db);
  const positions: Position[] = [];
  // A position is held in an asset that is no pricing currency, against one that is; its book value is the counter account.
  for (const r of rows.filter((x) => x.code === "conversion")) {
    const pricingCode = r.ref.slice("conversion:".length);
    const book = net.get(`${pricingCode}|conversion:${r.asset}`);
    if (!book || !pricingCodes.has(pricingCode) || pricingCodes.has(r.asset)) continue;
    positions.push(await positionOf(db, pricingCode, r.asset, BigInt(r.net), BigInt(book.net), now));
  }
  const gainsLosses = rows.filter((x) => x.code === "fx_gains_losses").map((x) => ({ asset: x.asset, scale: x.scale, net: BigInt(x.net) }));
  return { pairs, positions, gainsLosses };
}
