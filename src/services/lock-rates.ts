import type { Settlements } from "../chain/settlement.js";
import type { Database, Queryable } from "../db/client.js";
import { getAsset } from "../db/queries/assets.js";
import { insertRateLocks, queuedGroups, queuedOfGroup, takeQueued, type NewRateLock, type QueuedGroup } from "../db/queries/rate-locks.js";
import { sweepRateLocks } from "./rate-lock-sweep.js";
import { lockMarketplaceFundingExclusive, lockOperatorPayoutFunds } from "../db/queries/funding.js";
import type { Asset } from "../domain/assets.js";
import { splitByBps } from "../domain/conversion.js";
import { uuidv7 } from "../domain/ids.js";
import type { Logger } from "../log.js";
import { converts, currentPreference } from "./payout-preferences.js";
import { chooseRate, type RateChoice } from "./rates.js";
import { unfundedNets } from "./funding.js";
import { inTransaction } from "./transaction.js";

/** Groups (marketplace, operator, asset) and records per group taken per pass; pages of groups looked at per pass. */
const GROUPS = 100;
const PAGES = 4;
const RECORDS = 5_000;
/**
 * A pass chooses each pair's rate once and uses it for its groups. A group whose locks (the
 * operator's payout lock, the marketplace's funding lock) are granted longer than this after the
 * choice is locked at a rate chosen again once they are held. So a lock's rate is never more than
 * this (and the funding walk's time) older than the moment its earnings are taken.
 */
const MAX_CHOICE_AGE_MS = 5_000;

/**
 * Locks the rate of operators' earnings of marketplaces whose rate policy is `at_earning`
 * (docs/settlement.md, "Rate policy"). Their usage records are queued with the record itself; each
 * pass takes an operator's queued earnings, splits them by its payout preference in force (as a
 * payout would), and records for each asset other than the pricing currency a lock: that amount of
 * earnings, converted later at this moment's rate. The rate is chosen as a payout's is (fresh, the
 * sources agreeing): without a usable rate the earnings stay queued, and are locked at the first
 * usable rate. An operator without a preference that converts needs no lock; its queue is emptied.
 * Only funded earnings are locked, record by record (lockGroup): a record awaiting the
 * marketplace's money (docs/ledger.md, "Funded earnings") stays queued and is locked once the money
 * is in, at that moment's rate. A lock is used by any of the operator's payouts of the pair, so a
 * lock of usage whose money never comes would set the rate of earnings that are paid. Then the
 * operator's open locks of each pair are kept within the earnings they can be used for (sweepLocks).
 * A record is taken by one transaction only (rows are deleted as they are locked), whatever the
 * number of workers.
 */
export async function lockEarnedRates(db: Database, settlements: Settlements, log: Logger, options: { maxChoiceAgeMs?: number } = {}): Promise<number> {
  const maxChoiceAgeMs = options.maxChoiceAgeMs ?? MAX_CHOICE_AGE_MS;
  // The pass's rates: chosen once per pair, at `now`; chosen again when a group's locks came late.
  const pass = { now: db.clock.now(), choices: new Map<string, RateChoice>() };
  const waiting = new Set<string>();
  /** The group's targets at the pass's rates; null (logged once per reason) when a rate is not usable. */
  const targetsOf = async (q: Queryable, g: QueuedGroup, from: Asset, splits: { asset_id: string }[]): Promise<Target[] | null> => {
    const targets: Target[] = [];
    for (const s of splits) {
      if (s.asset_id === from.id) {
        targets.push({ asset: from, choice: null });
        continue;
      }
      const to = (await getAsset(q, s.asset_id))!;
      const key = `${from.id}:${to.id}`;
      if (!pass.choices.has(key)) pass.choices.set(key, await chooseRate(q, settlements, from, to, pass.now));
      targets.push({ asset: to, choice: pass.choices.get(key)! });
    }
    const blocked = targets.find((t) => t.choice !== null && !t.choice.ok);
    if (!blocked) return targets;
    const reason = (blocked.choice as { reason: string }).reason;
    if (!waiting.has(reason)) log.warn({ worker: "payouts", operator: g.operator_id, reason }, "earnings wait for a usable rate to be locked");
    waiting.add(reason);
    return null;
  };
  let locked = 0;
  for (const g of await waitingGroups(db)) {
    const from = (await getAsset(db, g.asset_id))!;
    const preference = await currentPreference(db, g.operator_id, g.asset_id);
    const splits = converts(preference) ? preference.splits : [];
    const targets = await targetsOf(db, g, from, splits);
    if (targets === null) continue;
    const chosenAt = pass.now;
    locked += await lockGroup(db, g, splits, async (tx) => {
      if (db.clock.now().getTime() - chosenAt.getTime() <= maxChoiceAgeMs) return { targets, now: chosenAt };
      // The group's locks came too long after the pass chose its rates (it waited for a payout or
      // for the marketplace's usage being written): the rates are chosen again, now, with the locks
      // held (in the group's transaction: the price feed is read while the marketplace's usage
      // waits, only in this case), for it and the groups after it. Never skipped: a marketplace that keeps its usage
      // writing must not put the lock off until a moment of its choosing.
      pass.now = db.clock.now();
      pass.choices = new Map();
      const again = await targetsOf(tx, g, from, splits);
      return again && { targets: again, now: pass.now };
    });
  }
  return locked;
}

type Target = { asset: Asset; choice: RateChoice | null };

/** Where the next pass starts, per database: past the groups a full pass found, so that groups waiting for funds do not hold the others back. */
const nextStart = new WeakMap<Database, number>();

/** The groups to look at in a pass: up to PAGES pages, from where the last full pass stopped (back to the oldest after a pass that saw them all). */
async function waitingGroups(db: Database): Promise<QueuedGroup[]> {
  const start = nextStart.get(db) ?? 0;
  const out: QueuedGroup[] = [];
  for (let page = 0; page < PAGES; page++) {
    const groups = await queuedGroups(db, GROUPS, start + page * GROUPS);
    out.push(...groups);
    if (groups.length < GROUPS) {
      nextStart.set(db, 0);
      return start > 0 && out.length === 0 ? waitingGroups(db) : out;
    }
  }
  nextStart.set(db, start + PAGES * GROUPS);
  return out;
}

/**
 * In one transaction: the group's funded queued records taken and their locks recorded, at the rates
 * `ratesNow` gives once the locks are held (the pass's, or chosen again when they came late; none
 * usable: nothing taken). Each record
 * is judged on its own (the funding walk, as payouts judge them): a record the marketplace's money
 * does not cover yet, even in part, stays queued and is locked once it is funded, at that moment's
 * rate; the funded records beside it are locked now, however many unfunded ones are queued before
 * them. (Judging the group as a whole let a marketplace hold all of an operator's funded earnings
 * back with one tiny unfunded record, and so choose the moment, and the rate, of their lock.) The
 * walk runs under the marketplace's funding lock, exclusive, as a payout's judgment does: no usage
 * of it is being written meanwhile, so a record drawn before the ones it judges (a lower
 * funding_seq) is never still uncommitted and unseen, and one written after is funded after them.
 */
async function lockGroup(
  db: Database,
  g: QueuedGroup,
  splits: { bps: number }[],
  ratesNow: (tx: Queryable) => Promise<{ targets: Target[]; now: Date } | null>,
): Promise<number> {
  return inTransaction(db, async (tx) => {
    // The operator's payout lock of the asset before its records are taken (then the marketplace's
    // funding lock, the order payouts take them in): a reversal takes it before it takes a record
    // out of the queue, so the two never wait on each other in a circle.
    await lockOperatorPayoutFunds(tx, g.operator_id, g.asset_id);
    if (splits.length === 0) {
      await takeQueued(tx, g, await queuedOfGroup(tx, g, RECORDS, []), uuidv7(db.clock.now().getTime()));
      await sweepRateLocks(tx, g.operator_id, g.asset_id);
      return 0;
    }
    await lockMarketplaceFundingExclusive(tx, g.marketplace_id);
    const rates = await ratesNow(tx);
    if (rates === null) return 0;
    const { targets, now } = rates;
    const passId = uuidv7(now.getTime());
    const unfunded = await unfundedNets(tx, g.marketplace_id, g.asset_id, g.operator_id, true);
    const taken = await takeQueued(tx, g, await queuedOfGroup(tx, g, RECORDS, unfunded.keys()), passId);
    if (!taken) return 0;
    const amounts = splitByBps(
      taken.total,
      splits.map((s) => s.bps),
    );
    const rows: NewRateLock[] = [];
    targets.forEach((t, i) => {
      if (t.choice === null || !t.choice.ok || amounts[i]! === 0n) return;
      rows.push({
        id: uuidv7(now.getTime()),
        marketplaceId: g.marketplace_id,
        operatorId: g.operator_id,
        fromAssetId: g.asset_id,
        toAssetId: t.asset.id,
        amount: amounts[i]!,
        rateNum: t.choice.chosen.rate.num,
        rateDen: t.choice.chosen.rate.den,
        rateId: t.choice.chosen.rateId,
        records: taken.records,
        earnedFrom: taken.since,
        lockedAt: now,
        passId,
        passTotal: taken.total,
      });
    });
    await insertRateLocks(tx, rows);
    await sweepRateLocks(tx, g.operator_id, g.asset_id, { shown: true });
    return rows.length;
  });
}
