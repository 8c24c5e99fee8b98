import type { Database } from "../db/client.js";
import { loadIngestFacts, type IngestFacts, type MarketplaceFacts } from "../db/queries/usage.js";
import type { UsageRecord } from "../domain/usage.js";
import { msPerUnit } from "../domain/capacity.js";
import type { WriteReceipt } from "../db/queries/write-receipts.js";
import { LedgerError, WriteContended } from "../domain/errors.js";
import { maybeGiveWay } from "../give-way.js";
import { CapacityChanged, FeeSchedulesChanged, PeriodsChanged, writeUsageBatch, type BatchWrite } from "./ingest-usage/ledger-batch.js";
import { recoverFromEarnings } from "./receivables.js";
import { judgeCapacity } from "./ingest-usage/capacity.js";
import { planRecord } from "./ingest-usage/rating.js";
import { abortAll, explainRefusals, finish } from "./ingest-usage/results.js";
import { batchLogHook, type BatchLogWriter } from "./ingest-usage/batch-log.js";
import { conflict, hashOf, usageKey, type OpenResults, type Planned, type UsageItem, type UsageResult } from "./ingest-usage/types.js";

export { FUTURE_TOLERANCE_MS } from "./ingest-usage/rating.js";
export type { UsageInput, UsageItem, UsageResult, WrittenUsage } from "./ingest-usage/types.js";
export type { AssetTotal, BatchLogWriter, LoggedResult } from "./ingest-usage/batch-log.js";

interface IngestOptions {
  atomic?: boolean;
  receipt?: WriteReceipt<void>;
  /** Writes the batch's log in the transaction of its records when some are written (src/services/usage-batches.ts). */
  log?: BatchLogWriter;
}

/**
 * Rates and posts usage records, set-based: one ledger batch for all of them (one transfer per
 * record: customer → operator payable for the net, customer → each fee account), with the usage
 * rows written in the same database transaction. Each record gets its own result: accepted,
 * duplicate (same marketplace and external id, same content: the original record), or rejected
 * with the reason. With `atomic`, one rejection means nothing is written.
 */
export async function ingestUsage(db: Database, items: UsageItem[], options: IngestOptions = {}): Promise<UsageResult[]> {
  // A month that changed status, a fee schedule published, or usage written over the capacity
  // judged, while the records were written (nothing was): plan them again, a few times at most.
  for (let attempt = 1; ; attempt++) {
    try {
      return await ingestOnce(db, items, options);
    } catch (err) {
      if (!(err instanceof PeriodsChanged || err instanceof CapacityChanged || err instanceof FeeSchedulesChanged)) throw err;
      if (attempt >= 5) {
        const what =
          err instanceof PeriodsChanged
            ? "a month's status"
            : err instanceof FeeSchedulesChanged
              ? "the marketplace's fee schedule"
              : "the usage stored against an operator's declared capacity";
        throw new WriteContended(`${what} changed under these records each of the ${attempt} times they were written (nothing was): retry shortly`);
      }
    }
  }
}

async function ingestOnce(db: Database, items: UsageItem[], options: IngestOptions): Promise<UsageResult[]> {
  const results: OpenResults = new Array(items.length);
  const hashes = await hashAll(items);
  const now = db.clock.now();
  const { existing, facts, capacity, owing } = await loadFacts(db, items, now);
  const { fresh, firstInBatch } = sortOutRepeats(items, hashes, existing, results);
  // Beyond its operator's declared capacity: refused, or flagged (docs/usage.md, "Capacity").
  const planned = await judgeCapacity(db, await planAll(items, fresh, hashes, facts, now, results), results, capacity);
  if (options.atomic && results.some((r) => r?.status === "rejected")) return abortAll(results);
  if (planned.length === 0) return finish(db, items, results, firstInBatch);

  const afterRecords = options.log ? batchLogHook(options.log, items, planned, results, firstInBatch) : undefined;
  const written = await writeUsageBatch(db, planned, options.atomic ?? false, options.receipt, afterRecords);
  const refusals = await explainRefusals(db, planned, written.outcomes, written.accounts);
  settle(planned, written, refusals, results);
  if (written.kind === "atomic_abort") return abortAll(results);
  // New earnings pay back what their operators owe first (docs/ledger.md, "Clawbacks"); which of
  // them owe anything was read with the facts.
  await recoverFromEarnings(
    db,
    results.flatMap((r) => (r?.status === "accepted" && owing.has(r.record.operatorId) ? [r.record.operatorId] : [])),
  );
  return finish(db, items, results, firstInBatch);
}

async function hashAll(items: UsageItem[]): Promise<string[]> {
  const hashes: string[] = [];
  for (const [i, item] of items.entries()) {
    await maybeGiveWay(i);
    hashes.push(hashOf(item));
  }
  return hashes;
}

/**
 * Repeats of records already stored (duplicates, or conflicts when the content differs) and
 * repeats within the batch (a conflicting repeat is rejected; an identical one is resolved after
 * the write, as a duplicate of the first). Returns the records to rate (by index) and, for each
 * record, the index of its first occurrence in the batch.
 */
function sortOutRepeats(
  items: UsageItem[],
  hashes: string[],
  existing: Map<string, UsageRecord>,
  results: OpenResults,
): { fresh: number[]; firstInBatch: Map<string, number> } {
  const firstInBatch = new Map<string, number>();
  const fresh: number[] = [];
  items.forEach((item, i) => {
    const key = usageKey(item.marketplaceId, item.input.externalId);
    const stored = existing.get(key);
    if (stored) {
      results[i] = stored.requestHash === hashes[i] ? { status: "duplicate", record: stored } : { status: "rejected", error: conflict(item.input.externalId) };
    } else if (firstInBatch.has(key)) {
      if (hashes[firstInBatch.get(key)!] !== hashes[i]) results[i] = { status: "rejected", error: conflict(item.input.externalId) };
      // else: resolved after the write, as a duplicate of the first
    } else {
      firstInBatch.set(key, i);
      fresh.push(i);
    }
  });
  return { fresh, firstInBatch };
}

/**
 * What the batch is checked and rated against, in one statement: the records already stored under
 * its external ids, and its customers, operators, fee schedules, assets, holds, limits, declared
 * capacity and the operators that owe a receivable. Read for every record of the batch (a repeat's are read needlessly, which costs less
 * than a second round trip).
 */
function loadFacts(db: Database, items: UsageItem[], now: Date): Promise<IngestFacts> {
  const unique = (pairs: [string, string][]) => [...new Map(pairs.map((p) => [`${p[0]}|${p[1]}`, p])).values()];
  return loadIngestFacts(
    db,
    {
      usage: unique(items.map((item) => [item.marketplaceId, item.input.externalId])),
      customers: unique(items.map((item) => [item.marketplaceId, item.input.customerId])),
      operators: unique(items.map((item) => [item.marketplaceId, item.input.operatorId])),
      marketplaces: [...new Set(items.map((item) => item.marketplaceId))],
      assetCodes: [...new Set(items.map((item) => item.input.asset))],
      holdIds: [...new Set(items.flatMap((item) => (item.input.holdId === undefined ? [] : [item.input.holdId])))],
      capacity: unique(
        items.flatMap((item) => (msPerUnit(item.input.unit) === undefined ? [] : [[item.input.operatorId, item.input.resource] as [string, string]])),
      ),
    },
    now,
  );
}

/** Rates and checks each fresh record; a record refused here gets its result now and is left out. */
async function planAll(items: UsageItem[], fresh: number[], hashes: string[], facts: MarketplaceFacts, now: Date, results: OpenResults): Promise<Planned[]> {
  const planned: Planned[] = [];
  for (const [k, i] of fresh.entries()) {
    // A large batch gives way to other requests every few hundred records while it rates them.
    await maybeGiveWay(k);
    try {
      planned.push(planRecord(i, items[i]!, hashes[i]!, facts, now.getTime()));
    } catch (err) {
      if (!(err instanceof LedgerError)) throw err;
      results[i] = { status: "rejected", error: err };
    }
  }
  return planned;
}

/**
 * The results of the records that went to the ledger: refused ones are rejected with the reason,
 * created ones accepted (only when the batch was written). Replayed ones (a concurrent request
 * stored the record first) stay open: they are answered from the database.
 */
function settle(planned: Planned[], written: BatchWrite, refusals: Map<number, LedgerError>, results: OpenResults): void {
  planned.forEach((p, k) => {
    const refusal = refusals.get(k);
    if (refusal) results[p.index] = { status: "rejected", error: refusal };
    else if (written.kind === "written" && written.outcomes[k]!.kind === "created") results[p.index] = { status: "accepted", record: written.records.get(k)! };
  });
}
