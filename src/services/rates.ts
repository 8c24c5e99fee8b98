import { FeedError, readPriceFeed } from "../chain/price-feed.js";
import type { Settlements } from "../chain/settlement.js";
import type { Queryable } from "../db/client.js";
import { insertRate, latestRate, type RateRow } from "../db/queries/conversions.js";
import type { Asset } from "../domain/assets.js";
import { FUTURE_TOLERANCE_MS } from "../domain/clock.js";
import { deviationBps, formatRate, invertRate, rateFromFeed, type Rate } from "../domain/conversion.js";
import { uuidv7 } from "../domain/ids.js";

/**
 * Which rate a conversion uses (docs/settlement.md, "Rates"). Sources of a pair: the on-chain price
 * feed configured for it (AggregatorV3Interface, read at the moment of conversion, each round
 * recorded once in `rates`), and the latest manual rate finance entered and a second key approved.
 * A source is fresh when it was observed within the bound of the pair's assets (the stricter of
 * the two). Conversion goes ahead only when:
 *   - a configured feed answers (a feed that reverts or answers no price stops it: its rate cannot be checked);
 *   - at least one source is fresh (the feed's if both are);
 *   - two fresh sources are no further apart than the deviation bound.
 * Otherwise the answer says why, and the payout waits.
 */

/** A rate a conversion may use, oriented from → to (whole `to` per whole `from`). */
export interface ChosenRate {
  rate: Rate;
  rateId: string;
  source: "feed" | "manual";
  observedAt: Date;
}

export type RateChoice = { ok: true; chosen: ChosenRate } | { ok: false; reason: string };

/** The feed configured for a pair, quoted either way, on any chain this service reads. */
export function feedFor(settlements: Settlements, a: string, b: string) {
  for (const chain of settlements.chains) {
    const feed = chain.settings.priceFeeds.find((f) => (f.base === a && f.quote === b) || (f.base === b && f.quote === a));
    if (feed) return { chain, feed };
  }
  return undefined;
}

/** Reads the pair's feed and records its round (once per round). Throws FeedError when the feed gives no price. */
async function readFeedRate(db: Queryable, settlements: Settlements, from: Asset, to: Asset, now: Date): Promise<RateRow | undefined> {
  const found = feedFor(settlements, from.code, to.code);
  if (!found) return undefined;
  const reading = await readPriceFeed(found.chain.client, found.feed.address);
  const [base, quote] = found.feed.base === from.code ? [from, to] : [to, from];
  // A rate is stored as numeric(78,0) numerator and denominator: 10^77 is the most a denominator holds.
  if (reading.decimals > 77)
    throw new FeedError("no_data", `price feed ${reading.address} answers with ${reading.decimals} decimals, more than a rate can hold (77)`);
  const rate = rateFromFeed(reading.answer, reading.decimals);
  const sourceRef = `${found.chain.chainId}:${reading.address}:${reading.roundId}`;
  const id = await insertRate(db, {
    id: uuidv7(now.getTime()),
    baseAssetId: base.id,
    quoteAssetId: quote.id,
    num: rate.num,
    den: rate.den,
    observedAt: reading.updatedAt,
    source: "feed",
    sourceRef,
    recordedAt: now,
  });
  return {
    id,
    base_asset_id: base.id,
    base: base.code,
    quote_asset_id: quote.id,
    quote: quote.code,
    num: rate.num.toString(),
    den: rate.den.toString(),
    observed_at: reading.updatedAt,
    source: "feed",
    source_ref: sourceRef,
    recorded_at: now,
  };
}

/** A stored rate oriented from → to. */
export function oriented(r: RateRow, fromAssetId: string): Rate {
  const rate = { num: BigInt(r.num), den: BigInt(r.den) };
  return r.base_asset_id === fromAssetId ? rate : invertRate(rate);
}

/** The bounds of a pair: the stricter of its two assets'. */
function boundsOf(from: Asset, to: Asset) {
  return {
    maxAgeSeconds: Math.min(from.rateBounds.maxAgeSeconds, to.rateBounds.maxAgeSeconds),
    maxDeviationBps: Math.min(from.rateBounds.maxDeviationBps, to.rateBounds.maxDeviationBps),
  };
}

const describe = (r: RateRow) =>
  `${r.source} rate ${formatRate({ num: BigInt(r.num), den: BigInt(r.den) })} ${r.quote}/${r.base} observed at ${new Date(r.observed_at).toISOString()} (${r.source_ref})`;

/** Chooses the rate to convert `from` into `to` at `now`, or says why there is none. */
export async function chooseRate(db: Queryable, settlements: Settlements, from: Asset, to: Asset, now: Date): Promise<RateChoice> {
  const pair = `${from.code}→${to.code}`;
  let feed: RateRow | undefined;
  try {
    feed = await readFeedRate(db, settlements, from, to, now);
  } catch (err) {
    if (err instanceof FeedError) return { ok: false, reason: `no rate for ${pair}: the price feed gave no price (${err.message})` };
    throw err;
  }
  const manual = await latestRate(db, from.id, to.id, "manual", new Date(now.getTime() + FUTURE_TOLERANCE_MS));
  const { maxAgeSeconds, maxDeviationBps } = boundsOf(from, to);
  const oldest = now.getTime() - maxAgeSeconds * 1000;
  const fresh = (r: RateRow | undefined) => {
    if (!r) return false;
    const t = new Date(r.observed_at).getTime();
    return t >= oldest && t <= now.getTime() + FUTURE_TOLERANCE_MS;
  };
  if (feed && new Date(feed.observed_at).getTime() > now.getTime() + FUTURE_TOLERANCE_MS) {
    return { ok: false, reason: `no rate for ${pair}: the price feed's latest round is observed in the future of this service's clock (${describe(feed)})` };
  }
  const candidates = [feed, manual].filter(fresh) as RateRow[];
  if (candidates.length === 0) {
    const seen = [feed, manual].filter((r): r is RateRow => r !== undefined);
    const what = seen.length === 0 ? "no price feed is configured for it and finance entered no rate" : `the latest is stale: ${seen.map(describe).join("; ")}`;
    return { ok: false, reason: `no rate for ${pair} observed within the last ${maxAgeSeconds} s: ${what}` };
  }
  if (candidates.length === 2) {
    const apart = deviationBps(oriented(feed!, from.id), oriented(manual!, from.id));
    if (apart > BigInt(maxDeviationBps)) {
      return {
        ok: false,
        reason: `the sources of ${pair} disagree by ${apart} bps, more than the bound of ${maxDeviationBps} bps: ${describe(feed!)}; ${describe(manual!)}`,
      };
    }
  }
  const use = candidates[0]!;
  return { ok: true, chosen: { rate: oriented(use, from.id), rateId: use.id, source: use.source, observedAt: new Date(use.observed_at) } };
}
