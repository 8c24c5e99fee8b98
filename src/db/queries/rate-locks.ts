import type { Queryable } from "../client.js";
import { splitByBps } from "../../domain/conversion.js";
import { pgArray } from "../sql-arrays.js";

/** Rate locks of marketplaces whose rate policy is `at_earning` (docs/settlement.md, "Rate policy"). */

export interface QueuedGroup {
  marketplace_id: string;
  operator_id: string;
  asset_id: string;
}

/** Operators' earnings waiting for a lock, one row per marketplace, operator and asset, oldest first (a page of them from `offset`). */
export async function queuedGroups(db: Queryable, limit: number, offset = 0): Promise<QueuedGroup[]> {
  return db.query<QueuedGroup>(
    `select marketplace_id, operator_id, asset_id::text as asset_id from rate_lock_queue
      group by marketplace_id, operator_id, asset_id order by min(queued_at), marketplace_id, operator_id, asset_id limit $1 offset $2`,
    [limit, offset],
  );
}

/**
 * Up to `limit` queued records of a group, oldest first, but those whose funding_seq is in
 * `unfunded` (the worker's funding walk), locked (rows another transaction is taking are skipped,
 * so a record is locked once). The unfunded ones are left out before the limit, so that any number
 * of them at the head of the queue cannot keep the funded ones behind them from being picked.
 */
export async function queuedOfGroup(tx: Queryable, g: QueuedGroup, limit: number, unfunded: Iterable<bigint>): Promise<string[]> {
  const rows = await tx.query<{ usage_id: string }>(
    `select q.usage_id::text as usage_id
       from rate_lock_queue q join usage_records u on u.id = q.usage_id and u.marketplace_id = q.marketplace_id
      where q.marketplace_id = $1 and q.operator_id = $2 and q.asset_id = $3 and u.funding_seq <> all($5::bigint[])
      order by q.queued_at, q.usage_id limit $4 for update of q skip locked`,
    [g.marketplace_id, g.operator_id, g.asset_id, limit, pgArray([...unfunded])],
  );
  return rows.map((r) => r.usage_id);
}

/**
 * Takes (deletes) queued records of a group (`usageIds`, locked by `queuedOfGroup`): what they
 * earned and since when. Each record taken is kept with the pass that took it (`passId`, the locks'
 * `pass_id`), so that its reversal gives its share of those locks back (migration 0043,
 * rate_locks_follow_reversal).
 */
export async function takeQueued(
  tx: Queryable,
  g: QueuedGroup,
  usageIds: string[],
  passId: string,
): Promise<{ total: bigint; records: number; since: Date } | undefined> {
  if (usageIds.length === 0) return undefined;
  const [row] = await tx.query<{ total: string | null; records: string; since: Date | string | null }>(
    `with taken as (
       delete from rate_lock_queue where marketplace_id = $1 and usage_id = any($2::uuid[])
       returning usage_id, net, queued_at),
     -- A record reversed while queued left the queue with its reversal; one that did not (a reversal
     -- older than that rule) is taken and dropped here, never locked.
     live as (select * from taken t where not exists (
       select 1 from usage_records u join transfers r on r.reverses_id = u.transfer_id where u.marketplace_id = $1 and u.id = t.usage_id)),
     linked as (insert into rate_lock_records (usage_id, pass_id, net) select usage_id, $3::uuid, net from live)
     select sum(net)::text as total, count(*)::text as records, min(queued_at) as since from live`,
    [g.marketplace_id, pgArray(usageIds), passId],
  );
  if (!row || row.total === null) return undefined;
  return { total: BigInt(row.total), records: Number(row.records), since: new Date(row.since!) };
}

/** The marketplaces with records of the operator in the asset waiting in the rate-lock queue. */
export async function queuedMarketplaces(tx: Queryable, operatorId: string, assetId: string): Promise<string[]> {
  const rows = await tx.query<{ marketplace_id: string }>("select distinct marketplace_id from rate_lock_queue where operator_id = $1 and asset_id = $2", [
    operatorId,
    assetId,
  ]);
  return rows.map((r) => r.marketplace_id);
}

/**
 * Earnings that left the payable before their records were locked (paid in the pricing currency or
 * at the rate of the moment, repaid to a receivable, taken by a reversal of earnings already paid)
 * must not be locked afterwards: the lock would be made for earnings that are gone, and the
 * operator's other earnings would be paid at its rate. Takes `amount` out of the operator's queued
 * records in `assetId`, oldest first: whole records out of the queue, and of the last one the part
 * that was paid (its queued net lowered: only the rest is ever locked). Only funded earnings count,
 * since only they are paid: of each record, its net less its unfunded part (`unfunded`, per
 * marketplace, by funding_seq) (docs/settlement.md, "Rate policy"). Runs
 * under the operator's payout lock of the asset, which the lock worker takes before it takes records.
 */
export async function dropQueued(
  tx: Queryable,
  operatorId: string,
  assetId: string,
  amount: bigint,
  unfunded: Map<string, Map<bigint, bigint>>,
): Promise<void> {
  if (amount <= 0n) return;
  const rows = await tx.query<{ marketplace_id: string; usage_id: string; net: string; funding_seq: string }>(
    `select q.marketplace_id, q.usage_id::text as usage_id, q.net::text as net, u.funding_seq::text as funding_seq
       from rate_lock_queue q join usage_records u on u.id = q.usage_id and u.marketplace_id = q.marketplace_id
      where q.operator_id = $1 and q.asset_id = $2 order by q.queued_at, q.usage_id for update of q`,
    [operatorId, assetId],
  );
  let left = amount;
  const dropped: { marketplace_id: string; usage_id: string }[] = [];
  for (const r of rows) {
    // Only its funded part may have been paid (each customer's money funds its own records first,
    // so a record after an unfunded one may be funded).
    const queuedNet = BigInt(r.net);
    const payable = queuedNet - (unfunded.get(r.marketplace_id)?.get(BigInt(r.funding_seq)) ?? 0n);
    if (payable <= 0n) continue;
    const take = payable < left ? payable : left;
    if (take === queuedNet) dropped.push(r);
    else
      await tx.query("update rate_lock_queue set net = net - $3 where marketplace_id = $1 and usage_id = $2", [r.marketplace_id, r.usage_id, take.toString()]);
    left -= take;
    if (left === 0n) break;
  }
  if (dropped.length === 0) return;
  await tx.query(`delete from rate_lock_queue q using unnest($1::text[], $2::uuid[]) d(m, u) where q.marketplace_id = d.m and q.usage_id = d.u`, [
    pgArray(dropped.map((d) => d.marketplace_id)),
    pgArray(dropped.map((d) => d.usage_id)),
  ]);
}

/** Which of these usage records wait in the rate-lock queue, with their queued net (lowered by what payouts took of it). */
export async function queuedAmong(tx: Queryable, usageIds: string[]): Promise<Map<string, bigint>> {
  if (usageIds.length === 0) return new Map();
  const rows = await tx.query<{ usage_id: string; net: string }>(
    "select usage_id::text as usage_id, net::text as net from rate_lock_queue where usage_id = any($1::uuid[])",
    [pgArray(usageIds)],
  );
  return new Map(rows.map((r) => [r.usage_id, BigInt(r.net)]));
}

/** Each lock's amount and the net of the records it was made with (null for a lock made before 0043). */
export async function lockCoverage(tx: Queryable, ids: string[]): Promise<Map<string, { amount: bigint; passTotal: bigint | null }>> {
  if (ids.length === 0) return new Map();
  const rows = await tx.query<{ id: string; amount: string; pass_total: string | null }>(
    "select id::text as id, amount::text as amount, pass_total::text as pass_total from rate_locks where id = any($1::uuid[])",
    [pgArray(ids)],
  );
  return new Map(rows.map((r) => [r.id, { amount: BigInt(r.amount), passTotal: r.pass_total === null ? null : BigInt(r.pass_total) }]));
}

/**
 * The earnings each record's own open share of its locks stands for (the share its reversal gives
 * back, rate_locks_follow_reversal; a 50% share stands for twice its amount), in the pricing
 * currency: 0 for a record never locked.
 */
export async function ownOpenShares(tx: Queryable, usageIds: string[]): Promise<Map<string, bigint>> {
  if (usageIds.length === 0) return new Map();
  // Several records of one lock (a dispute's) share what is open of it: each gets its share, in
  // record order, as far as what the records before it left open.
  const rows = await tx.query<{ usage_id: string; open: string }>(
    `with shares as (
       select r.usage_id, r.net, l.id as lock_id, l.amount, l.pass_total, l.amount - l.consumed - l.released as open, div(l.amount * r.net, l.pass_total) as share
         from rate_lock_records r join rate_locks l on l.pass_id = r.pass_id
        where r.usage_id = any($1::uuid[]) and l.pass_total > 0),
     placed as (
       select usage_id, open, share, amount, pass_total, net,
              coalesce(sum(share) over (partition by lock_id order by usage_id rows between unbounded preceding and 1 preceding), 0) as before
         from shares)
     -- The earnings a lock's open share stands for (a 50% share stands for twice its amount); of the
     -- locks of the record's pass (one per asset), the most, never more than the record's net.
     select usage_id::text as usage_id, least(max(div(greatest(least(share, open - before), 0) * pass_total, amount)), max(net))::text as open
       from placed group by usage_id`,
    [pgArray(usageIds)],
  );
  return new Map(rows.map((r) => [r.usage_id, BigInt(r.open)]));
}

export interface NewRateLock {
  id: string;
  marketplaceId: string;
  operatorId: string;
  fromAssetId: string;
  toAssetId: string;
  amount: bigint;
  rateNum: bigint;
  rateDen: bigint;
  rateId: string;
  records: number;
  earnedFrom: Date;
  lockedAt: Date;
  /** The pass that took its records from the queue, and their total net. */
  passId: string;
  passTotal: bigint;
}

export async function insertRateLocks(tx: Queryable, rows: NewRateLock[]): Promise<void> {
  if (rows.length === 0) return;
  const col = (f: (r: NewRateLock) => string) => pgArray(rows.map(f));
  await tx.query(
    `insert into rate_locks (id, marketplace_id, operator_id, from_asset_id, to_asset_id, amount, rate_num, rate_den, rate_id, records, earned_from, locked_at,
                             pass_id, pass_total)
     select * from unnest($1::uuid[], $2::text[], $3::text[], $4::uuid[], $5::uuid[], $6::numeric[], $7::numeric[], $8::numeric[], $9::uuid[],
                          $10::numeric[], $11::timestamptz[], $12::timestamptz[], $13::uuid[], $14::numeric[])`,
    [
      col((r) => r.id),
      col((r) => r.marketplaceId),
      col((r) => r.operatorId),
      col((r) => r.fromAssetId),
      col((r) => r.toAssetId),
      col((r) => r.amount.toString()),
      col((r) => r.rateNum.toString()),
      col((r) => r.rateDen.toString()),
      col((r) => r.rateId),
      col((r) => String(r.records)),
      col((r) => r.earnedFrom.toISOString()),
      col((r) => r.lockedAt.toISOString()),
      col((r) => r.passId),
      col((r) => r.passTotal.toString()),
    ],
  );
}

/** Whether the operator has a lock from the asset not yet used up or released. */
export async function hasOpenLocks(tx: Queryable, operatorId: string, fromAssetId: string): Promise<boolean> {
  const rows = await tx.query("select 1 from rate_locks where operator_id = $1 and from_asset_id = $2 and consumed + released < amount limit 1", [
    operatorId,
    fromAssetId,
  ]);
  return rows.length > 0;
}

/**
 * Keeps an operator's open locks from `fromAssetId` within the earnings they can still be used for
 * (docs/settlement.md, "Rate policy"). Called in the transaction of every event that takes earnings
 * out of the payable or makes locks: a payout requested (any asset, any route), a convert payout
 * about to be sliced, and a pass of the lock worker. Two bounds, in the payable's units:
 *
 * - per pair, open locks ≤ what pending convert payouts will convert into that asset (their parts,
 *   fixed when they were requested) + the payable's available balance (posted, less every hold)
 *   less `withheld`: its earnings whose money has not come in and what it owes the platform (those
 *   are not earnings a lock can be used for: a marketplace's unfunded usage must not keep open the
 *   lock of earnings paid some other way);
 * - across pairs, what is open beyond those pending parts ≤ the available balance: a unit of
 *   earnings is locked into one asset at most.
 *
 * The excess is released from the oldest locks first, after the oldest ones the pending payouts
 * will use (they slice oldest first): earnings leave the payable oldest first. So a lock whose
 * earnings were paid some other way (in the pricing currency, in another asset, repaid to a
 * receivable) is released then, and is not kept for later earnings that were never locked. Locks
 * are never made open again: a released amount is gone.
 */
export async function sweepLocks(tx: Queryable, operatorId: string, fromAssetId: string, withheld: bigint): Promise<void> {
  const open = await tx.query<{ id: string; to: string; open: string }>(
    `select id, to_asset_id::text as to, (amount - consumed - released)::text as open from rate_locks
      where operator_id = $1 and from_asset_id = $2 and consumed + released < amount
      order by locked_at, id for update`,
    [operatorId, fromAssetId],
  );
  if (open.length === 0) return;
  // The balance and the pending convert payouts in one statement (one snapshot): a payout cancelled
  // between two reads would be in neither, and its earnings' locks released.
  const [bal] = await tx.query<{ available: string; pending: { amount: string; splits: { asset_id: string; bps: number }[] }[] | null }>(
    `select coalesce((select greatest(b.credits_posted - b.debits_posted - b.debits_pending, 0)
                        from accounts a join account_balances b on b.account_id = a.id
                       where a.asset_id = $2 and a.marketplace_id is null and a.opened_by_service and a.ref = 'operator:' || $1 || ':payable'), 0)::text as available,
            (select json_agg(json_build_object('amount', amount::text, 'splits', splits)) from payouts
              where operator_id = $1 and asset_id = $2 and status = 'pending' and splits is not null) as pending`,
    [operatorId, fromAssetId],
  );
  const reserved = new Map<string, bigint>();
  for (const p of bal!.pending ?? []) {
    const parts = splitByBps(
      BigInt(p.amount),
      p.splits.map((x) => x.bps),
    );
    p.splits.forEach((x, i) => reserved.set(x.asset_id, (reserved.get(x.asset_id) ?? 0n) + parts[i]!));
  }
  const left = BigInt(bal!.available) - withheld;
  const available = left > 0n ? left : 0n;
  // What of each pair is open beyond its pending parts, walking its locks oldest first.
  const beyond = new Map<string, bigint>();
  const seen = new Map<string, bigint>();
  const free = open.map((l) => {
    const before = seen.get(l.to) ?? 0n;
    const amount = BigInt(l.open);
    seen.set(l.to, before + amount);
    const held = reserved.get(l.to) ?? 0n;
    const releasable = before + amount <= held ? 0n : before >= held ? amount : before + amount - held;
    beyond.set(l.to, (beyond.get(l.to) ?? 0n) + releasable);
    return releasable;
  });
  // Per pair: beyond its pending parts, no more than the available balance.
  const pairExcess = new Map([...beyond].map(([to, b]) => [to, b > available ? b - available : 0n]));
  const release = open.map(() => 0n);
  open.forEach((l, i) => {
    const excess = pairExcess.get(l.to)!;
    const part = free[i]! < excess ? free[i]! : excess;
    release[i] = part;
    pairExcess.set(l.to, excess - part);
  });
  // Across pairs: what is left beyond the pending parts, no more than the available balance.
  let excess = free.reduce((t, f, i) => t + f - release[i]!, 0n) - available;
  open.forEach((_, i) => {
    if (excess <= 0n) return;
    const left = free[i]! - release[i]!;
    const part = left < excess ? left : excess;
    release[i] = release[i]! + part;
    excess -= part;
  });
  for (const [i, l] of open.entries())
    if (release[i]! > 0n) await tx.query("update rate_locks set released = released + $2 where id = $1", [l.id, release[i]!.toString()]);
}

export interface OpenLockRow {
  id: string;
  remaining: string;
  rate_num: string;
  rate_den: string;
  rate_id: string;
  source: "feed" | "manual";
  observed_at: Date | string;
  locked_at: Date | string;
}

/**
 * An operator's locks of a pair not used up, oldest first. Called under the pair's conversion lock
 * (lockConversionPair), which every conversion of the pair takes, so no other transaction uses them.
 */
export async function openRateLocks(tx: Queryable, operatorId: string, fromAssetId: string, toAssetId: string): Promise<OpenLockRow[]> {
  return tx.query<OpenLockRow>(
    `select l.id, (l.amount - l.consumed - l.released)::text as remaining, l.rate_num::text as rate_num, l.rate_den::text as rate_den, l.rate_id, r.source,
            r.observed_at, l.locked_at
       from rate_locks l join rates r on r.id = l.rate_id
      where l.operator_id = $1 and l.from_asset_id = $2 and l.to_asset_id = $3 and l.consumed + l.released < l.amount
      order by l.locked_at, l.id`,
    [operatorId, fromAssetId, toAssetId],
  );
}

/**
 * Uses `amount` of a lock; throws when it has less left (a lock is never used beyond its amount;
 * a reversal that gave some back after it was read makes the conversion run again later).
 */
export async function consumeRateLock(tx: Queryable, id: string, amount: bigint): Promise<void> {
  const rows = await tx.query("update rate_locks set consumed = consumed + $2 where id = $1 and consumed + released + $2 <= amount returning id", [
    id,
    amount.toString(),
  ]);
  if (rows.length !== 1) throw new Error(`rate lock ${id} has less than ${amount} left`);
}

export interface RateLockRow {
  id: string;
  marketplace_id: string;
  operator_id: string;
  from_asset: string;
  from_scale: number;
  to_asset: string;
  amount: string;
  consumed: string;
  released: string;
  rate_num: string;
  rate_den: string;
  rate_id: string;
  source: "feed" | "manual";
  observed_at: Date | string;
  records: string;
  earned_from: Date | string;
  locked_at: Date | string;
}

/** Rate locks in the order they were made (locked_at, id), after the cursor; of one operator when given. */
export async function listRateLocks(db: Queryable, f: { operatorId?: string; after?: { at: Date; id: string }; limit: number }): Promise<RateLockRow[]> {
  return db.query<RateLockRow>(
    `select l.id, l.marketplace_id, l.operator_id, fa.code as from_asset, fa.scale as from_scale, ta.code as to_asset, l.amount::text as amount,
            l.consumed::text as consumed, l.released::text as released, l.rate_num::text as rate_num, l.rate_den::text as rate_den, l.rate_id, r.source, r.observed_at,
            l.records::text as records, l.earned_from, l.locked_at
       from rate_locks l join assets fa on fa.id = l.from_asset_id join assets ta on ta.id = l.to_asset_id join rates r on r.id = l.rate_id
      where ($1::text is null or l.operator_id = $1) and ($2::timestamptz is null or (l.locked_at, l.id) > ($2::timestamptz, $3::uuid))
      order by l.locked_at, l.id limit $4`,
    [f.operatorId ?? null, f.after?.at.toISOString() ?? null, f.after?.id ?? null, f.limit],
  );
}

/**
 * For verify: locks whose `consumed` is not what the conversions naming them used, and conversions
 * naming a lock that does not exist or is of another operator, pair or rate.
 */
export async function rateLockMismatches(db: Queryable): Promise<{ id: string; what: string }[]> {
  return db.query(
    `select l.id::text as id, 'rate lock ' || l.id || ' records ' || l.consumed || ' used, its conversions used ' || coalesce(c.used, 0) as what
       from rate_locks l left join (select rate_lock_id, sum(part) as used from conversions where rate_lock_id is not null group by rate_lock_id) c
         on c.rate_lock_id = l.id
      where l.consumed <> coalesce(c.used, 0)
     union all
     select c.id::text, 'conversion ' || c.id || ' names rate lock ' || c.rate_lock_id || ', which ' ||
            case when l.id is null then 'does not exist' else 'is of another operator, pair or rate' end
       from conversions c left join rate_locks l on l.id = c.rate_lock_id
      where c.rate_lock_id is not null and (l.id is null or l.rate_num * c.rate_den <> c.rate_num * l.rate_den or l.operator_id <> c.operator_id
            or l.from_asset_id <> c.from_asset_id or l.to_asset_id <> c.to_asset_id)`,
  );
}
