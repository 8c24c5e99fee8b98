import type { Queryable } from "../../db/client.js";
import { capacityPoliciesOf, lockCapacity, usedUnitMs, type CapacityRow } from "../../db/queries/capacity.js";
import { capacityExceeded, capacityUnitMs, claimedUnitMs, exceeds, msPerUnit, shareIn, type CapacityVersion } from "../../domain/capacity.js";
import { parseDecimal } from "../../domain/rating.js";
import type { OpenResults, Planned } from "./types.js";

const pairKey = (operatorId: string, resource: string) => `${operatorId}|${resource}`;

export const toVersion = (r: CapacityRow): CapacityVersion => ({
  resource: r.resource,
  version: r.version,
  units: r.units,
  effectiveFrom: new Date(r.effective_from),
  until: r.until === null ? null : new Date(r.until),
});

/** A planned record the capacity rule applies to, with its window and claim. */
interface Checked {
  p: Planned;
  pair: string;
  from: number;
  to: number;
  claimed: bigint;
}

/**
 * The capacity rule over a planned batch (docs/usage.md, "Capacity"): a record of a time unit,
 * whose operator declared capacity of its resource before the record's period starts, may not
 * claim more unit-milliseconds than that capacity holds over the record's period, less what the
 * operator's stored usage (every marketplace) and the batch's records before it hold of that period.
 * Set-based: `rows` is the capacity of the batch's (operator, resource) pairs, read with the
 * batch's other facts (src/db/queries/usage.ts, loadIngestFacts; nothing more is read when no
 * operator declared any); one statement reads the usage already stored over the windows to
 * check. A record beyond it is refused (its result set here, left out of the batch) or, under its
 * marketplace's `flag` policy for the resource, kept with a flag. Returns the records to write.
 */
export async function judgeCapacity(db: Queryable, planned: Planned[], results: OpenResults, rows: CapacityRow[]): Promise<Planned[]> {
  const timed = planned.filter((p) => msPerUnit(p.item.input.unit) !== undefined);
  if (rows.length === 0) return planned;
  const versions = new Map<string, CapacityVersion[]>();
  for (const r of rows) versions.set(pairKey(r.operator_id, r.resource), [...(versions.get(pairKey(r.operator_id, r.resource)) ?? []), toVersion(r)]);
  const checked = checkedRecords(timed, versions);
  if (checked.length === 0) return planned;
  const stored = await usedUnitMs(
    db,
    checked.map((c, key) => ({
      key,
      operatorId: c.p.item.input.operatorId,
      resource: c.p.item.input.resource,
      start: c.p.item.input.periodStart,
      end: c.p.item.input.periodEnd,
    })),
  );
  let policies: Map<string, "refuse" | "flag"> | undefined;
  const refused = new Set<Planned>();
  const before: Checked[] = [];
  for (const [key, c] of checked.entries()) {
    const { operatorId, resource, periodStart: start, periodEnd: end } = c.p.item.input;
    const fromBatch = before.filter((b) => b.pair === c.pair).reduce((sum, b) => sum + shareIn(b.claimed, b, c.from, c.to), 0n);
    const j = { capacity: capacityUnitMs(versions.get(c.pair)!, c.from, c.to), used: (stored.get(key) ?? 0n) + fromBatch, claimed: c.claimed };
    c.p.capacityStored = { operatorId, resource, start, end, stored: stored.get(key) ?? 0n, capacity: j.capacity, fromBatch, claimed: c.claimed };
    if (exceeds(j)) {
      policies ??= await capacityPoliciesOf(db, [...new Set(checked.map((x) => x.p.item.marketplaceId))]);
      const { marketplaceId: m, input } = c.p.item;
      const policy = policies.get(`${m}|${input.resource}`) ?? policies.get(`${m}|*`) ?? "refuse";
      if (policy === "refuse") {
        refused.add(c.p);
        results[c.p.index] = {
          status: "rejected",
          error: capacityExceeded(input.operatorId, input.resource, { from: input.periodStart, to: input.periodEnd }, j),
        };
        continue;
      }
      c.p.capacityFlag = j;
    }
    before.push(c);
  }
  return refused.size === 0 ? planned : planned.filter((p) => !refused.has(p));
}

/**
 * Whether the stored usage a batch's capacity judgement counted changed before its write so that a
 * record's judgement would change (one that fitted no longer does, or the reverse): called in the
 * write's transaction, after taking the capacity lock of each (operator, resource) judged, which
 * every batch judged on that pair takes too, so two marketplaces' batches cannot each fit in the
 * same free capacity. Changed: the batch is planned again (nothing written). Usage written
 * meanwhile that leaves every judgement as it was does not send the batch back (before, any write
 * did: another marketplace's records of a shared operator, one after another, sent a batch back
 * until it failed); a flag's figure of the usage is brought up to date.
 */
export async function capacityChanged(tx: Queryable, planned: Planned[]): Promise<boolean> {
  const judged = planned.flatMap((p) => (p.capacityStored ? [{ p, j: p.capacityStored }] : []));
  if (judged.length === 0) return false;
  await lockCapacity(tx, [...new Set(judged.map(({ j }) => pairKey(j.operatorId, j.resource)))]);
  const now = await usedUnitMs(
    tx,
    judged.map(({ j }, key) => ({ key, operatorId: j.operatorId, resource: j.resource, start: j.start, end: j.end })),
  );
  const updates: { p: Planned; used: bigint }[] = [];
  for (const [key, { p, j }] of judged.entries()) {
    const stored = now.get(key) ?? 0n;
    if (stored === j.stored) continue;
    const used = stored + j.fromBatch;
    const was = exceeds({ capacity: j.capacity, used: j.stored + j.fromBatch, claimed: j.claimed });
    if (exceeds({ capacity: j.capacity, used, claimed: j.claimed }) !== was) return true;
    updates.push({ p, used });
  }
  for (const { p, used } of updates) if (p.capacityFlag) p.capacityFlag = { ...p.capacityFlag, used };
  return false;
}

/** The records the rule applies to, in batch order: their operator declared capacity of the resource at or before their period's start. */
function checkedRecords(timed: Planned[], versions: Map<string, CapacityVersion[]>): Checked[] {
  return timed.flatMap((p) => {
    const { operatorId, resource, periodStart, periodEnd, quantity, unit } = p.item.input;
    const pair = pairKey(operatorId, resource);
    const declared = versions.get(pair);
    if (!declared || !declared.some((v) => v.effectiveFrom.getTime() <= periodStart.getTime())) return [];
    const claimed = claimedUnitMs(parseDecimal(quantity)!, msPerUnit(unit)!);
    return [{ p, pair, from: periodStart.getTime(), to: periodEnd.getTime(), claimed }];
  });
}
