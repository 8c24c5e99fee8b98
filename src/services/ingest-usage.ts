import { canonicalJson, sha256Hex } from "../domain/canonical.js";
import { LedgerError } from "../domain/errors.js";
import { uuidv7 } from "../domain/ids.js";
import { parseUnits, unitsToDecimal } from "../domain/money.js";
import { grossFromPrice, parseDecimal, resolveRule, splitGross, type Split } from "../domain/rating.js";
import { checkUsageLimits } from "../domain/usage-limits.js";
import { limitsOf } from "./usage-limits.js";
import type { TransferInput } from "../domain/transfers.js";
import type { Database, Queryable } from "../db/client.js";
import { ensureAccounts } from "../db/ensure-accounts.js";
import { chart, specKey, type AccountSpec } from "../domain/chart.js";
import { findUsageByExternalIds, loadMarketplaceFacts, type MarketplaceFacts } from "../db/queries/usage.js";
import { getDebitHeadroom } from "../db/queries/accounts.js";
import { type UsageRecord } from "../domain/usage.js";
import { Contended, writeTransfers, type BatchOutcome } from "../db/transfer-writer.js";
import { lockUsageFunding } from "./funding.js";
import { insertUsageRecords } from "../db/usage-writer.js";
import { maybeGiveWay } from "../give-way.js";

/** A usage record as a marketplace reports it (already checked for shape). */
export interface UsageInput {
  externalId: string;
  operatorId: string;
  customerId: string;
  resource: string;
  unit: string;
  /** Decimal string, e.g. "3600" gpu_second. */
  quantity: string;
  /** Decimal price per unit in the asset's display units, e.g. "0.000694"; or give `amount`. */
  unitPrice?: string;
  /** Total in the asset's smallest unit, e.g. "2499094". */
  amount?: string;
  asset: string;
  periodStart: Date;
  periodEnd: Date;
  /** Charge the record to this open hold of the customer instead of to the customer's balance. */
  holdId?: string;
  metadata?: Record<string, unknown>;
}

export interface UsageItem {
  marketplaceId: string;
  input: UsageInput;
}

export type UsageResult =
  | { status: "accepted"; record: UsageRecord }
  | { status: "duplicate"; record: UsageRecord }
  | { status: "rejected"; error: LedgerError };

/** How far in the future a record's period may end (clock skew between marketplace and ledger). */
export const FUTURE_TOLERANCE_MS = 5 * 60_000;

interface Planned {
  index: number;
  item: UsageItem;
  hash: string;
  usageId: string;
  assetId: string;
  scale: number;
  split: Split;
  feeScheduleVersion: number;
  /** Who pays: the customer's account, or the escrow of a hold. */
  payer: AccountSpec | { accountId: string };
  operator: AccountSpec;
  fees: AccountSpec[];
}

const hashOf = (item: UsageItem) => sha256Hex(canonicalJson(item.input));

class AtomicAbort extends Error {}
/** Every request was refused or replayed: roll back, so that no account opened for them remains. */
class NothingWritten extends Error {}

const usageKey = (m: string, ext: string) => `${m}|${ext}`;
/** The ledger idempotency key of a record's transfer: unambiguous for any marketplace id and external id. */
const ledgerKey = (m: string, ext: string) => `usage:${m.length}:${m}:${ext}`;

/**
 * Rates and posts usage records, set-based: one ledger batch for all of them (one transfer per
 * record: customer → operator payable for the net, customer → each fee account), with the usage
 * rows written in the same database transaction. Each record gets its own result: accepted,
 * duplicate (same marketplace and external id, same content: the original record), or rejected
 * with the reason. With `atomic`, one rejection means nothing is written.
 */
export async function ingestUsage(db: Database, items: UsageItem[], options: { atomic?: boolean } = {}): Promise<UsageResult[]> {
  const results: (UsageResult | undefined)[] = new Array(items.length);
  const hashes: string[] = [];
  for (const [i, item] of items.entries()) {
    await maybeGiveWay(i);
    hashes.push(hashOf(item));
  }
  const existing = await findUsageByExternalIds(db, items.map((i) => ({ marketplaceId: i.marketplaceId, externalId: i.input.externalId })));

  // Repeats of records already stored, and repeats within the batch.
  const firstInBatch = new Map<string, number>();
  const fresh: number[] = [];
  items.forEach((item, i) => {
    const key = usageKey(item.marketplaceId, item.input.externalId);
    const stored = existing.get(key);
    if (stored) {
      results[i] = stored.requestHash === hashes[i]
        ? { status: "duplicate", record: stored }
        : { status: "rejected", error: conflict(item.input.externalId) };
    } else if (firstInBatch.has(key)) {
      if (hashes[firstInBatch.get(key)!] !== hashes[i]) results[i] = { status: "rejected", error: conflict(item.input.externalId) };
      // else: resolved after the write, as a duplicate of the first
    } else {
      firstInBatch.set(key, i);
      fresh.push(i);
    }
  });

  const now = db.clock.now();
  const facts = await loadMarketplaceFacts(db, {
    customers: fresh.map((i) => [items[i]!.marketplaceId, items[i]!.input.customerId]),
    operators: fresh.map((i) => [items[i]!.marketplaceId, items[i]!.input.operatorId]),
    marketplaces: [...new Set(fresh.map((i) => items[i]!.marketplaceId))],
    assetCodes: [...new Set(fresh.map((i) => items[i]!.input.asset))],
    holdIds: [...new Set(fresh.flatMap((i) => (items[i]!.input.holdId === undefined ? [] : [items[i]!.input.holdId!])))],
  }, now);
  const planned: Planned[] = [];
  for (const [k, i] of fresh.entries()) {
    // A large batch gives way to other requests every few hundred records while it rates them.
    await maybeGiveWay(k);
    try {
      planned.push(plan(i, items[i]!, hashes[i]!, facts, now.getTime()));
    } catch (err) {
      if (!(err instanceof LedgerError)) throw err;
      results[i] = { status: "rejected", error: err };
    }
  }
  if (options.atomic && results.some((r) => r?.status === "rejected")) return abortAll(results);
  if (planned.length === 0) return finish(db, items, results, firstInBatch);

  let accounts = new Map<string, string>();
  let outcomes: BatchOutcome[] = [];
  let records = new Map<number, UsageRecord>();
  try {
    // Accounts are opened on first use inside the batch's transaction: a batch that writes nothing
    // (all refused, or an atomic abort) leaves no account behind.
    const prepare = async (tx: Queryable) => {
      await lockUsageFunding(tx, planned.map((p) => p.item.marketplaceId));
      accounts = await ensureAccounts(tx, planned.flatMap((p) => ["accountId" in p.payer ? [] : [p.payer], p.operator, ...p.fees].flat()));
      const transfers: TransferInput[] = [];
      for (const [k, p] of planned.entries()) {
        await maybeGiveWay(k);
        transfers.push(toTransfer(p, accounts));
      }
      return transfers;
    };
    await writeTransfers(db, prepare, {
      optimistic: true,
      afterWrite: async (tx, written, bookedAt) => {
        outcomes = written;
        if (options.atomic && written.some((o) => o.kind === "refused")) throw new AtomicAbort();
        if (!written.some((o) => o.kind === "created")) throw new NothingWritten();
        records = new Map();
        planned.forEach((p, k) => {
          const o = written[k]!;
          if (o.kind === "created") records.set(k, toRecord(p, accounts, o.transfer.id, bookedAt));
        });
        if ((await insertUsageRecords(tx, [...records.values()])) !== records.size) throw new Contended();
      },
    });
  } catch (err) {
    if (!(err instanceof NothingWritten) && !(err instanceof AtomicAbort)) throw err;
    const refusals = await explainRefusals(db, planned, outcomes, accounts);
    planned.forEach((p, k) => {
      if (refusals.has(k)) results[p.index] = { status: "rejected", error: refusals.get(k)! };
    });
    return err instanceof NothingWritten ? finish(db, items, results, firstInBatch) : abortAll(results);
  }
  const refusals = await explainRefusals(db, planned, outcomes, accounts);
  planned.forEach((p, k) => {
    const o = outcomes[k]!;
    if (o.kind === "refused") results[p.index] = { status: "rejected", error: refusals.get(k)! };
    else if (o.kind === "created") results[p.index] = { status: "accepted", record: records.get(k)! };
    // replayed: a concurrent request stored it first; answered from the database below
  });
  return finish(db, items, results, firstInBatch);
}

/** A ledger key conflict on a usage transfer means another record took this external_id first. */
function usageError(err: LedgerError, externalId: string): LedgerError {
  return err.code === "idempotency_conflict" ? conflict(externalId) : err;
}

/**
 * The problems of the records the ledger refused, by their place in `planned`. A record refused by
 * its customer's balance limit is told what the limit is and how much of it is left: a prepaid
 * customer's available balance, or a postpaid customer's credit limit in the asset.
 */
async function explainRefusals(db: Queryable, planned: Planned[], outcomes: BatchOutcome[], accounts: Map<string, string>): Promise<Map<number, LedgerError>> {
  const out = new Map<number, LedgerError>();
  const byLimit: { k: number; p: Planned; accountId: string | undefined }[] = [];
  planned.forEach((p, k) => {
    const o = outcomes[k];
    if (o?.kind !== "refused") return;
    out.set(k, usageError(o.error, p.item.input.externalId));
    if (o.error.code === "exceeds_credits" && !("accountId" in p.payer)) byLimit.push({ k, p, accountId: accounts.get(specKey(p.payer)) });
  });
  if (byLimit.length === 0) return out;
  const ids = byLimit.flatMap((x) => (x.accountId ? [x.accountId] : []));
  const rows = await getDebitHeadroom(db, ids);
  const found = new Map(rows.map((r) => [r.id, r]));
  for (const { k, p, accountId } of byLimit) {
    const row = accountId ? found.get(accountId) : undefined;
    const left = row ? BigInt(row.left) : 0n;
    const limit = row ? BigInt(row.od) : 0n;
    const { customerId, asset } = p.item.input;
    const d = (v: bigint) => unitsToDecimal(v < 0n ? 0n : v, p.scale);
    const cost = `the ${d(p.split.gross)} ${asset} this record costs`;
    const message = !("code" in p.payer) || p.payer.code === "customer_prepaid"
      ? `customer ${customerId}'s available ${asset} balance is ${d(left)}, less than ${cost}`
      : limit === 0n
        ? `customer ${customerId} has no credit limit in ${asset}: its postpaid usage in ${asset} is refused until one is approved (PUT /v1/customers/${customerId}/credit-limits/${asset})`
        : `customer ${customerId}'s credit limit in ${asset} is ${d(limit)}; ${d(left)} of it is left, less than ${cost}`;
    const code = !("code" in p.payer) || p.payer.code === "customer_prepaid" ? "exceeds_credits" : "credit_limit_exceeded";
    out.set(k, new LedgerError(code, message, [{ path: "customerId", message }]));
  }
  return out;
}

function conflict(externalId: string): LedgerError {
  return new LedgerError("usage_conflict", `usage record ${externalId} was already posted with different content`);
}

function abortAll(results: (UsageResult | undefined)[]): UsageResult[] {
  return [...results].map((r) => r?.status === "rejected" ? r : {
    status: "rejected" as const,
    error: new LedgerError("atomic_batch_aborted", "not written: another record of this atomic batch was rejected"),
  });
}

/** Fills the results still open (records stored concurrently, in-batch repeats) from the database. */
async function finish(db: Database, items: UsageItem[], results: (UsageResult | undefined)[], firstInBatch: Map<string, number>): Promise<UsageResult[]> {
  const open = items.map((_, i) => i).filter((i) => results[i] === undefined);
  if (open.length === 0) return results as UsageResult[];
  const stored = await findUsageByExternalIds(db, open.map((i) => ({ marketplaceId: items[i]!.marketplaceId, externalId: items[i]!.input.externalId })));
  for (const i of open) {
    const key = usageKey(items[i]!.marketplaceId, items[i]!.input.externalId);
    const first = results[firstInBatch.get(key)!];
    const record = stored.get(key);
    if (first?.status === "rejected" && firstInBatch.get(key) !== i) results[i] = first;
    else if (record && record.requestHash === hashOf(items[i]!)) results[i] = { status: "duplicate", record };
    else if (record) results[i] = { status: "rejected", error: conflict(items[i]!.input.externalId) };
    else results[i] = { status: "rejected", error: new LedgerError("usage_conflict", `usage record ${items[i]!.input.externalId} was written concurrently with different content`) };
  }
  return results as UsageResult[];
}

function plan(index: number, item: UsageItem, hash: string, facts: MarketplaceFacts, now: number): Planned {
  const { marketplaceId: m, input } = item;
  const asset = facts.assets.get(input.asset);
  if (!asset) throw new LedgerError("asset_not_found", `asset ${input.asset} does not exist`, [{ path: "asset", message: "does not exist" }]);
  const billing = facts.customers.get(`${m}|${input.customerId}`);
  if (!billing) throw new LedgerError("customer_not_found", `customer ${input.customerId} does not exist in marketplace ${m}`, [{ path: "customerId", message: "does not exist" }]);
  if (!facts.operators.has(`${m}|${input.operatorId}`)) {
    throw new LedgerError("operator_not_found", `operator ${input.operatorId} is not registered with marketplace ${m}`, [{ path: "operatorId", message: "is not registered" }]);
  }
  if (input.periodStart.getTime() > input.periodEnd.getTime()) {
    throw new LedgerError("invalid_request", "the period must start before it ends", [{ path: "periodStart", message: "is after periodEnd" }]);
  }
  if (input.periodEnd.getTime() > now + FUTURE_TOLERANCE_MS) {
    throw new LedgerError("usage_in_future", `the period ends at ${input.periodEnd.toISOString()}, more than 5 minutes from now`);
  }
  const gross = grossOf(input, asset.scale);
  if (gross === 0n) throw new LedgerError("rates_to_zero", "quantity × unit_price is less than one smallest unit of the asset");
  checkUsageLimits({ quantity: parseDecimal(input.quantity)!, unit: input.unit, periodStart: input.periodStart, periodEnd: input.periodEnd, gross,
    pricedBy: input.amount !== undefined ? "amount" : "unitPrice" },
    limitsOf(facts.limits.get(`${m}|${asset.id}`), asset.scale), input.asset);
  const schedule = facts.schedules.get(m)?.find((s) => s.effectiveFrom.getTime() <= input.periodEnd.getTime());
  if (!schedule) throw new LedgerError("no_fee_schedule", `marketplace ${m} has no fee schedule in force at ${input.periodEnd.toISOString()}`);
  const rules = schedule.rules.map((r) => resolveRule(r, { resource: input.resource, operatorId: input.operatorId, assetCode: input.asset }));
  let payer: Planned["payer"] = chart.customer(asset.id, m, input.customerId, billing === "prepaid");
  if (input.holdId !== undefined) {
    const hold = facts.holds.get(input.holdId);
    if (!hold || hold.marketplaceId !== m) throw new LedgerError("hold_not_found", `hold ${input.holdId} does not exist`, [{ path: "holdId", message: "does not exist" }]);
    if (hold.customerId !== input.customerId || hold.assetId !== asset.id) {
      throw new LedgerError("invalid_request", `hold ${input.holdId} reserves funds of another customer or asset`, [{ path: "holdId", message: "belongs to another customer or asset" }]);
    }
    // Past its expiry a hold takes no more usage, even before the expirer has closed it.
    if (hold.status !== "open" || hold.expired) throw new LedgerError("hold_closed", `hold ${input.holdId} is ${hold.status === "open" ? "expired" : hold.status}`);
    payer = { accountId: hold.escrowAccountId };
  }
  return {
    index, item, hash, usageId: uuidv7(), assetId: asset.id, scale: asset.scale,
    split: splitGross(gross, rules),
    feeScheduleVersion: schedule.version,
    payer,
    operator: chart.operatorPayable(asset.id, input.operatorId),
    fees: rules.map((r) => chart.fees(asset.id, m, r.party)),
  };
}

function grossOf(input: UsageInput, scale: number): bigint {
  const quantity = parseDecimal(input.quantity);
  if (!quantity) throw new LedgerError("invalid_request", "quantity must be a decimal number of at most 40 digits and 18 decimals, e.g. \"3600\" or \"1.5\"", [{ path: "quantity", message: "invalid" }]);
  if (quantity.digits === 0n) throw new LedgerError("invalid_request", "quantity must be greater than zero", [{ path: "quantity", message: "must be greater than zero" }]);
  if ((input.amount === undefined) === (input.unitPrice === undefined)) {
    throw new LedgerError("invalid_request", "give either unit_price or amount", [{ path: "unitPrice", message: "give either unit_price or amount" }]);
  }
  if (input.amount !== undefined) {
    const amount = parseUnits(input.amount);
    if (amount === undefined) throw new LedgerError("invalid_request", "amount must be an integer in the asset's smallest unit", [{ path: "amount", message: "invalid" }]);
    return amount;
  }
  const price = parseDecimal(input.unitPrice!);
  if (!price) throw new LedgerError("invalid_request", "unit_price must be a decimal number of at most 40 digits and 18 decimals", [{ path: "unitPrice", message: "invalid" }]);
  return grossFromPrice(quantity, price, scale);
}

function toTransfer(p: Planned, accounts: Map<string, string>): TransferInput {
  const id = (s: AccountSpec) => accounts.get(specKey(s))!;
  const customer = "accountId" in p.payer ? p.payer.accountId : id(p.payer);
  const legs = [
    ...(p.split.net > 0n ? [{ debitAccountId: customer, creditAccountId: id(p.operator), amount: p.split.net }] : []),
    ...p.split.fees.flatMap((f, k) => (f.amount > 0n ? [{ debitAccountId: customer, creditAccountId: id(p.fees[k]!), amount: f.amount }] : [])),
  ];
  return {
    kind: "standard",
    idempotencyKey: ledgerKey(p.item.marketplaceId, p.item.input.externalId),
    effectiveAt: p.item.input.periodEnd,
    // Deterministic (no usage id): concurrent submissions of one record must make the same ledger request, so the loser replays.
    // The record's content hash makes two different records under one external_id two different
    // ledger requests (a conflict), even when they happen to rate to the same legs.
    metadata: { usage: { marketplace_id: p.item.marketplaceId, external_id: p.item.input.externalId, request_hash: p.hash } },
    legs,
  };
}

function toRecord(p: Planned, accounts: Map<string, string>, transferId: string, createdAt: Date): UsageRecord {
  const { marketplaceId, input } = p.item;
  return {
    id: p.usageId, marketplaceId, externalId: input.externalId, requestHash: p.hash, operatorId: input.operatorId,
    customerId: input.customerId, resource: input.resource, unit: input.unit, quantity: input.quantity,
    unitPrice: input.unitPrice ?? null, assetId: p.assetId, gross: p.split.gross, net: p.split.net,
    fees: p.split.fees.map((f, k) => ({ party: f.party, accountId: accounts.get(specKey(p.fees[k]!))!, amount: f.amount })),
    feeScheduleVersion: p.feeScheduleVersion, periodStart: input.periodStart, periodEnd: input.periodEnd,
    effectiveAt: input.periodEnd, holdId: input.holdId ?? null, transferId, metadata: input.metadata ?? {}, createdAt, status: "posted",
  };
}
