import type { Queryable } from "../client.js";
import { pgArray } from "../sql-arrays.js";
import type { PayoutSplit } from "./payout-row.js";

/**
 * Hybrid settlement (docs/settlement.md): rates with their source, operators' payout preferences,
 * marketplaces' pricing currencies, and the conversions booked when a convert payout is paid.
 */

export interface RateRow {
  id: string;
  base_asset_id: string;
  base: string;
  quote_asset_id: string;
  quote: string;
  num: string;
  den: string;
  observed_at: Date | string;
  source: "feed" | "manual";
  source_ref: string;
  recorded_at: Date | string;
}

const RATE_SELECT = `select r.id, r.base_asset_id, b.code as base, r.quote_asset_id, q.code as quote, r.num::text as num, r.den::text as den,
  r.observed_at, r.source, r.source_ref, r.recorded_at
  from rates r join assets b on b.id = r.base_asset_id join assets q on q.id = r.quote_asset_id`;

export interface NewRate {
  id: string;
  baseAssetId: string;
  quoteAssetId: string;
  num: bigint;
  den: bigint;
  observedAt: Date;
  source: "feed" | "manual";
  sourceRef: string;
  recordedAt: Date;
}

/** Records a rate once per source reference (a feed's round is read many times); answers the stored row's id. */
export async function insertRate(tx: Queryable, r: NewRate): Promise<string> {
  await tx.query(
    `insert into rates (id, base_asset_id, quote_asset_id, num, den, observed_at, source, source_ref, recorded_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9) on conflict (source, source_ref) do nothing`,
    [r.id, r.baseAssetId, r.quoteAssetId, r.num.toString(), r.den.toString(), r.observedAt.toISOString(), r.source, r.sourceRef, r.recordedAt.toISOString()],
  );
  const [row] = await tx.query<{ id: string }>("select id from rates where source = $1 and source_ref = $2", [r.source, r.sourceRef]);
  return row!.id;
}

/** The latest rate of a source between two assets (quoted either way), observed at or before `at`. */
export async function latestRate(db: Queryable, a: string, b: string, source: "feed" | "manual", at: Date): Promise<RateRow | undefined> {
  const [row] = await db.query<RateRow>(
    `${RATE_SELECT} where r.source = $3 and r.observed_at <= $4
        and ((r.base_asset_id = $1 and r.quote_asset_id = $2) or (r.base_asset_id = $2 and r.quote_asset_id = $1))
      order by r.observed_at desc, r.recorded_at desc limit 1`,
    [a, b, source, at.toISOString()],
  );
  return row;
}

/** Rates, newest observation first; of one asset (either side) when given. Keyset: (observed_at, id) below the cursor. */
export async function listRates(db: Queryable, f: { assetId?: string; before?: { at: Date; id: string }; limit: number }): Promise<RateRow[]> {
  return db.query<RateRow>(
    `${RATE_SELECT} where ($1::uuid is null or r.base_asset_id = $1 or r.quote_asset_id = $1)
        and ($2::timestamptz is null or (r.observed_at, r.id) < ($2::timestamptz, $3::uuid))
      order by r.observed_at desc, r.id desc limit $4`,
    [f.assetId ?? null, f.before?.at.toISOString() ?? null, f.before?.id ?? null, f.limit],
  );
}

export interface PreferenceRow {
  operator_id: string;
  asset_id: string;
  asset: string;
  version: number;
  splits: PayoutSplit[];
  set_by: string;
  set_at: Date | string;
  request_id: string | null;
}

/** Every version of an operator's payout preference for earnings in an asset, newest first. */
export async function preferenceVersions(db: Queryable, operatorId: string, assetId: string): Promise<PreferenceRow[]> {
  return db.query<PreferenceRow>(
    `select p.operator_id, p.asset_id, a.code as asset, p.version, p.splits, p.set_by, p.set_at, p.request_id
       from payout_preferences p join assets a on a.id = p.asset_id
      where p.operator_id = $1 and p.asset_id = $2 order by p.version desc`,
    [operatorId, assetId],
  );
}

/** Appends a version; concurrent changes of one operator and asset are serialised by the unique version. */
export async function insertPreference(
  tx: Queryable,
  p: { operatorId: string; assetId: string; splits: PayoutSplit[]; setBy: string; setAt: Date; requestId: string | null },
): Promise<number> {
  await tx.query("select pg_advisory_xact_lock(hashtextextended('payout_preferences:' || $1 || ':' || $2, 0))", [p.operatorId, p.assetId]);
  const [row] = await tx.query<{ version: number }>(
    `insert into payout_preferences (operator_id, asset_id, version, splits, set_by, set_at, request_id)
     select $1, $2, coalesce(max(version), 0) + 1, $3::text::jsonb, $4, $5, $6 from payout_preferences where operator_id = $1 and asset_id = $2
     returning version`,
    [p.operatorId, p.assetId, JSON.stringify(p.splits), p.setBy, p.setAt.toISOString(), p.requestId],
  );
  return row!.version;
}

/** A marketplace's pricing currency (asset id and code), if it has one. */
export async function marketplacePricing(db: Queryable, marketplaceId: string): Promise<{ id: string; code: string } | undefined> {
  const [row] = await db.query<{ id: string; code: string }>(
    "select a.id, a.code from marketplaces m join assets a on a.id = m.pricing_asset_id where m.id = $1",
    [marketplaceId],
  );
  return row;
}

export type RatePolicy = "at_payout" | "at_earning";

export async function setMarketplacePricing(
  tx: Queryable,
  marketplaceId: string,
  assetId: string | null,
  at: Date,
  ratePolicy: RatePolicy = "at_payout",
): Promise<void> {
  await tx.query("update marketplaces set pricing_asset_id = $2, pricing_set_at = $3, rate_policy = $4 where id = $1", [
    marketplaceId,
    assetId,
    at.toISOString(),
    ratePolicy,
  ]);
}

/** Pending convert payouts the worker may convert (not waiting for an approval), oldest first. */
export async function listConvertiblePayouts(db: Queryable, limit: number): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    `select id from payouts where status = 'pending' and settlement = 'convert' and (approval is null or approval = 'approved')
      order by created_at limit $1`,
    [limit],
  );
  return rows.map((r) => r.id);
}

export async function markPayoutConverted(tx: Queryable, id: string, transferId: string, at: Date): Promise<void> {
  await tx.query("update payouts set status = 'converted', settle_transfer_id = $2, note = null, confirmed_at = $3, updated_at = $3 where id = $1", [
    id,
    transferId,
    at.toISOString(),
  ]);
}

export interface NewConversion {
  id: string;
  transferId: string;
  kind: "payout" | "deposit";
  payoutId: string | null;
  childPayoutId: string | null;
  operatorId: string | null;
  marketplaceId: string | null;
  customerId: string | null;
  fromAssetId: string;
  toAssetId: string;
  bps: number;
  part: bigint;
  used: bigint;
  remainder: bigint;
  toAmount: bigint;
  rateNum: bigint;
  rateDen: bigint;
  rateId: string | null;
  /** The rate lock this slice used (docs/settlement.md, "Rate policy"); absent or null: none. */
  rateLockId?: string | null;
  revaluation: bigint;
  convertedAt: Date;
}

export async function insertConversions(tx: Queryable, rows: NewConversion[]): Promise<void> {
  if (rows.length === 0) return;
  const col = (f: (r: NewConversion) => string | null) => pgArray(rows.map(f));
  await tx.query(
    `insert into conversions (id, transfer_id, payout_id, child_payout_id, operator_id, from_asset_id, to_asset_id, bps, part, used, remainder, to_amount,
                              rate_num, rate_den, rate_id, revaluation, converted_at, kind, marketplace_id, customer_id, rate_lock_id)
     select * from unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $6::uuid[], $7::uuid[], $8::int[], $9::numeric[], $10::numeric[],
                          $11::numeric[], $12::numeric[], $13::numeric[], $14::numeric[], $15::uuid[], $16::numeric[], $17::timestamptz[],
                          $18::text[], $19::text[], $20::text[], $21::uuid[])`,
    [
      col((r) => r.id),
      col((r) => r.transferId),
      col((r) => r.payoutId),
      col((r) => r.childPayoutId),
      col((r) => r.operatorId),
      col((r) => r.fromAssetId),
      col((r) => r.toAssetId),
      col((r) => String(r.bps)),
      col((r) => r.part.toString()),
      col((r) => r.used.toString()),
      col((r) => r.remainder.toString()),
      col((r) => r.toAmount.toString()),
      col((r) => r.rateNum.toString()),
      col((r) => r.rateDen.toString()),
      col((r) => r.rateId),
      col((r) => r.revaluation.toString()),
      col((r) => r.convertedAt.toISOString()),
      col((r) => r.kind),
      col((r) => r.marketplaceId),
      col((r) => r.customerId),
      col((r) => r.rateLockId ?? null),
    ],
  );
}

/** Posted credits less posted debits of accounts (a missing account: 0). */
export async function postedNets(db: Queryable, accountIds: string[]): Promise<Map<string, bigint>> {
  const rows = await db.query<{ id: string; net: string }>(
    "select account_id as id, (credits_posted - debits_posted)::text as net from account_balances where account_id = any($1::uuid[])",
    [pgArray(accountIds)],
  );
  return new Map(rows.map((r) => [r.id, BigInt(r.net)]));
}

/** Serialises conversions of one pair (either way), so that each marks the position the previous one left. */
export async function lockConversionPair(tx: Queryable, fromAssetId: string, toAssetId: string): Promise<void> {
  const [a, b] = [fromAssetId, toAssetId].sort();
  await tx.query("select pg_advisory_xact_lock(hashtextextended('conversion:' || $1 || ':' || $2, 0))", [a, b]);
}

export interface ConversionRow {
  id: string;
  transfer_id: string;
  payout_id: string;
  child_payout_id: string | null;
  operator_id: string;
  from_asset: string;
  from_scale: number;
  to_asset: string;
  to_scale: number;
  bps: number;
  part: string;
  used: string;
  remainder: string;
  to_amount: string;
  rate_num: string;
  rate_den: string;
  rate_id: string | null;
  rate_source: "feed" | "manual" | null;
  rate_observed_at: Date | string | null;
  rate_lock_id: string | null;
  revaluation: string;
  converted_at: Date | string;
}

/**
 * Conversions of convert payouts (not of deposits) in the order they were booked (converted_at, id),
 * after the cursor; of one operator or payout when given.
 */
export async function listConversions(
  db: Queryable,
  f: { operatorId?: string; payoutId?: string; after?: { at: Date; id: string }; limit: number },
): Promise<ConversionRow[]> {
  return db.query<ConversionRow>(
    `select c.id, c.transfer_id, c.payout_id, c.child_payout_id, c.operator_id, fa.code as from_asset, fa.scale as from_scale, ta.code as to_asset,
            ta.scale as to_scale, c.bps, c.part::text as part, c.used::text as used, c.remainder::text as remainder, c.to_amount::text as to_amount,
            c.rate_num::text as rate_num, c.rate_den::text as rate_den, c.rate_id, r.source as rate_source, r.observed_at as rate_observed_at,
            c.rate_lock_id, c.revaluation::text as revaluation, c.converted_at
       from conversions c join assets fa on fa.id = c.from_asset_id join assets ta on ta.id = c.to_asset_id left join rates r on r.id = c.rate_id
      where c.kind = 'payout' and ($1::text is null or c.operator_id = $1) and ($2::uuid is null or c.payout_id = $2)
        and ($3::timestamptz is null or (c.converted_at, c.id) > ($3::timestamptz, $4::uuid))
      order by c.converted_at, c.id limit $5`,
    [f.operatorId ?? null, f.payoutId ?? null, f.after?.at.toISOString() ?? null, f.after?.id ?? null, f.limit],
  );
}

/** The pricing currency's code (or null) and the rate policy of each of these marketplaces. */
export async function marketplacePricingCodes(db: Queryable, marketplaceIds: string[]): Promise<Map<string, { code: string | null; ratePolicy: RatePolicy }>> {
  if (marketplaceIds.length === 0) return new Map();
  const rows = await db.query<{ id: string; code: string | null; rate_policy: RatePolicy }>(
    "select m.id, a.code, m.rate_policy from marketplaces m left join assets a on a.id = m.pricing_asset_id where m.id = any($1::text[])",
    [pgArray(marketplaceIds)],
  );
  return new Map(rows.map((r) => [r.id, { code: r.code, ratePolicy: r.rate_policy }]));
}
