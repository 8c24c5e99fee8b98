import type { Queryable } from "../db/client.js";
import {
  customersDebitsBound,
  customersNeedBeyondCash,
  lockFundingOfOperatorMarketplaces,
  lockFundingOfOperatorsMarketplaces,
  lockMarketplacesFundingShared,
  lockOperatorPayoutFunds,
  marketplaceFundingTotals,
  marketplacePoolTotals,
  payablesOfPaidOperators,
  unfundedNetsOfOperator,
  unfundedUsageByOperator,
} from "../db/queries/funding.js";
import { marketplaceIdsOfOperator } from "../db/queries/parties.js";
import { disputedNet, owedByOperator } from "../db/queries/receivables.js";
import { LedgerError } from "../domain/errors.js";
import { unitsToDecimal } from "../domain/money.js";

/**
 * Funded earnings (docs/ledger.md, "Funded earnings"): usage credits an operator at once, but the
 * operator can be paid on chain only as far as the money behind its usage has been received.
 *
 * Per marketplace and asset, the money that funds usage is, in this order:
 *   1. each customer's own money received — its on-chain deposits (chain_deposits) and the receipts
 *      finance recorded for it (funds_receipts with a customer) — which funds that customer's usage
 *      records in the order they were recorded;
 *   2. the marketplace's pool — its settlements (funds_receipts without a customer) plus the credit
 *      limit the platform grants it — which funds what step 1 left of all its records, again in
 *      recording order.
 * A record is funded for what these cover of its gross; its operator's funded share is the same
 * fraction of its net, rounded down. First come, first funded: a later record never takes money
 * that funds an earlier one, so an operator's funded earnings never shrink because someone else's
 * usage arrived, and one customer's money never pays for another customer's usage. Off-chain
 * deposits a marketplace claims (POST /v1/customers/{id}/deposits) and postpaid usage are money the
 * marketplace owes: they fund nothing until it is received.
 */

export interface MarketplacePool {
  settled: bigint;
  creditLimit: bigint;
}

export async function marketplacePool(db: Queryable, marketplaceId: string, assetId: string): Promise<MarketplacePool> {
  return marketplacePoolTotals(db, marketplaceId, assetId);
}

/**
 * An upper bound of what the marketplace's usage needs beyond its customers' own money: each
 * customer account's debits (its usage and the holds opened from it, whatever was reversed since)
 * less its money received. When the pool covers it, every record is funded, without reading them.
 */
async function needUpperBound(db: Queryable, marketplaceId: string, assetId: string): Promise<bigint> {
  return customersNeedBeyondCash(db, marketplaceId, assetId);
}

/**
 * The operator's records in the marketplace and asset that its money leaves (partly) unfunded, by
 * funding_seq, with the unfunded part of their net; empty when every record is funded. For the
 * rate-lock queue. `useMark`: the lock worker walks from the funding mark when the money funds every
 * record up to it (the same records, the same amounts as a walk over all of them; docs/ledger.md,
 * "The funding mark"), so the marketplace's usage, which waits for the walk, does not wait longer
 * as its history grows; where money leaves the payable (dropQueuedPaid), every record is walked.
 */
export async function unfundedNets(db: Queryable, marketplaceId: string, assetId: string, operatorId: string, useMark: boolean): Promise<Map<bigint, bigint>> {
  const pool = await marketplacePool(db, marketplaceId, assetId);
  const available = pool.settled + pool.creditLimit;
  if ((await needUpperBound(db, marketplaceId, assetId)) <= available) return new Map();
  return unfundedNetsOfOperator(db, marketplaceId, assetId, available, operatorId, useMark);
}

export interface Unfunded {
  operatorId: string;
  /** Of the operator's net: what waits for the marketplace's money. */
  net: bigint;
  /** Of that net, the part of records in open disputes (held by the dispute too). */
  disputedNet: bigint;
  /** Of the records' gross (operator and fees): what the marketplace still owes. */
  gross: bigint;
}

/**
 * The unfunded part of the usage of one marketplace in one asset, per operator (all operators, or
 * only `operatorId`). Usage reversed is left out.
 */
export async function unfundedUsage(
  db: Queryable,
  marketplaceId: string,
  assetId: string,
  operatorId: string | null = null,
  options: Without = {},
): Promise<Unfunded[]> {
  // Independent reads: sent together (one round trip on a connection, or two connections of a pool).
  const [pool, bound] = await Promise.all([
    marketplacePool(db, marketplaceId, assetId),
    options.shown ? customersDebitsBound(db, marketplaceId, assetId) : Promise.resolve(null),
  ]);
  const available = pool.settled + pool.creditLimit;
  // For a balance shown: the customers' debits alone (one row) are covered, so is what they need
  // beyond their money. Money moved is judged on the full sum below, whatever that row says.
  if (bound !== null && bound <= available) return [];
  if ((await needUpperBound(db, marketplaceId, assetId)) <= available) return [];
  const without = options.withoutUsageIds ?? (options.withoutUsageId === undefined ? null : [options.withoutUsageId]);
  const rows = await unfundedUsageByOperator(db, { marketplaceId, assetId, available, operatorId, withoutUsageIds: without, useMark: options.shown === true });
  return rows.map((r) => ({ operatorId: r.operator_id, net: BigInt(r.net), gross: BigInt(r.gross), disputedNet: BigInt(r.disputed_net) }));
}

/** Usage records to leave out, as if they were reversed already; and whether the judgment is only shown. */
export interface Without {
  withoutUsageId?: string;
  withoutUsageIds?: string[];
  /**
   * The judgment is shown (a balance, a marketplace's funding), not acted on: it may trust the
   * customers' debit totals kept by a trigger (customersDebitsBound) to find every record funded
   * without summing every customer, and the funding mark (walking only the usage after it).
   * Payouts, reversals and recoveries leave it unset: money moves only on what the rows themselves say.
   */
  shown?: boolean;
}

export interface AwaitingFunds {
  /** Of the operator's earnings: what cannot be paid out until marketplaces' money arrives. */
  total: bigint;
  byMarketplace: Array<{ marketplaceId: string; amount: bigint }>;
  /** Of `total`, the part of records in open disputes. */
  disputed: bigint;
}

/**
 * What of an operator's earnings in an asset waits for money, per marketplace it sells through
 * (`withoutUsageId`: as it would be once that record is reversed).
 */
export async function awaitingFunds(db: Queryable, operatorId: string, assetId: string, options: Without & KnownMarkets = {}): Promise<AwaitingFunds> {
  const markets = options.markets ?? (await marketplaceIdsOfOperator(db, operatorId));
  const unfunded = await Promise.all(markets.map(async (marketplaceId) => (await unfundedUsage(db, marketplaceId, assetId, operatorId, options))[0]));
  const byMarketplace: AwaitingFunds["byMarketplace"] = [];
  let disputed = 0n;
  markets.forEach((marketplaceId, i) => {
    const u = unfunded[i];
    if (u && u.net > 0n) byMarketplace.push({ marketplaceId, amount: u.net });
    disputed += u?.disputedNet ?? 0n;
  });
  return { total: byMarketplace.reduce((s, m) => s + m.amount, 0n), byMarketplace, disputed };
}

/**
 * The locks under which an operator's payable-now is judged and taken (payouts, reversals of its
 * usage): its own, then each marketplace it sells through in exclusive mode. Usage ingestion holds
 * its marketplace's lock in shared mode for its whole transaction and draws the records'
 * funding_seq under it, so the judgment waits for usage being written, and usage written later
 * is funded after everything the judgment saw: money that funds earnings already paid out is never
 * given to a record that arrives afterwards.
 */
export async function lockOperatorFunds(tx: Queryable, operatorId: string, assetId: string): Promise<void> {
  await lockOperatorPayoutFunds(tx, operatorId, assetId);
  await lockFundingOfOperatorMarketplaces(tx, operatorId);
}

/**
 * lockOperatorFunds for several operators and assets at once (a dispute's records): every operator
 * and asset lock first, in a fixed order, then every marketplace lock, in marketplace order, so that
 * two such transactions, or one and a payout, never wait on each other in a circle.
 */
export async function lockOperatorsFunds(tx: Queryable, payables: Array<{ operatorId: string; assetId: string }>): Promise<void> {
  await lockOperatorPayables(tx, payables);
  await lockFundingOfOperatorsMarketplaces(tx, [...new Set(payables.map((p) => p.operatorId))]);
}

/**
 * Only the operator and asset locks, in that fixed order (opening a dispute: payouts and reversals
 * of these payables wait for it, and it for them; usage is not held up).
 */
export async function lockOperatorPayables(tx: Queryable, payables: Array<{ operatorId: string; assetId: string }>): Promise<void> {
  const keys = [...new Map(payables.map((p) => [`${p.operatorId}|${p.assetId}`, p])).entries()].sort(([a], [b]) => (a < b ? -1 : 1));
  for (const [, p] of keys) await lockOperatorPayoutFunds(tx, p.operatorId, p.assetId);
}

/**
 * Taken by usage ingestion at the start of its transaction (see lockOperatorFunds): one statement,
 * sent at once (before any await), so that statements sent after it without waiting run under it.
 */
export function lockUsageFunding(tx: Queryable, marketplaceIds: string[]): Promise<void> {
  return lockMarketplacesFundingShared(tx, marketplaceIds);
}

/** "awaiting funds from marketplace m: 89000 TUSD; from marketplace n: …" */
export function describeAwaiting(a: AwaitingFunds, asset: { code: string; scale: number }): string {
  return a.byMarketplace.map((m) => `awaiting funds from marketplace ${m.marketplaceId}: ${unitsToDecimal(m.amount, asset.scale)} ${asset.code}`).join("; ");
}

/**
 * What of an operator's available balance in an asset may not be paid now (docs/ledger.md, "Funded
 * earnings" and "Clawbacks"), in the order it is kept back:
 *   1. earnings whose money has not been received (`awaiting`);
 *   2. funded earnings of usage records in open disputes (`held`: their net, less the part already
 *      counted in 1), until the disputes are decided;
 *   3. what the operator owes the platform (`receivable`): recovered from its earnings before
 *      anything else is paid;
 *   4. everything, while it owes the platform in another asset (`owedElsewhere`): a receivable is
 *      recovered from earnings in its own asset only, and earnings converted out of that asset (a
 *      converted payout's part cancelled or failed) would otherwise be paid while the debt stands.
 *      Whatever creates a receivable (a clawback, an upheld dispute) holds the funding locks of the
 *      operator's marketplaces, which a payout's judgment takes too: the two are judged in turn.
 */
export interface Withheld {
  awaiting: AwaitingFunds;
  /** The net of its records in open disputes, funded or not (what the balances show as held). */
  disputed: bigint;
  /** The part of `disputed` not already in `awaiting`. */
  held: bigint;
  receivable: bigint;
  /** What the operator owes the platform in its other assets. */
  owedElsewhere: Array<{ assetCode: string; scale: number; owed: bigint }>;
}

/** The marketplaces the operator sells through (marketplaceIdsOfOperator), when the caller read them already. */
export interface KnownMarkets {
  markets?: string[];
}

export { marketplaceIdsOfOperator };

export async function withheldEarnings(
  db: Queryable,
  operatorId: string,
  assetId: string,
  options: Pick<Without, "shown"> & KnownMarkets = {},
): Promise<Withheld> {
  // Every receivable with something owed, this asset's among them: one read for both.
  const [awaiting, disputed, owing] = await Promise.all([
    awaitingFunds(db, operatorId, assetId, options),
    disputedNet(db, operatorId, assetId),
    owedByOperator(db, operatorId),
  ]);
  const owed = BigInt(owing.find((r) => r.asset_id === assetId)?.owed ?? 0n);
  const owedElsewhere = owing.filter((r) => r.asset_id !== assetId).map((r) => ({ assetCode: r.code, scale: r.scale, owed: BigInt(r.owed) }));
  return { awaiting, disputed, held: disputed - awaiting.disputed, receivable: owed > 0n ? owed : 0n, owedElsewhere };
}

/** What of an operator's available balance may be paid now: what is left once everything withheld is kept back. */
export function payableNow(available: bigint, w: Withheld): bigint {
  if (w.owedElsewhere.length > 0) return 0n;
  const p = available - w.awaiting.total - w.held - w.receivable;
  return p > 0n ? p : 0n;
}

/** The payout refusal when `amount` is more than is payable now: for want of funds first, else for what disputes and the receivable keep back. */
export function payoutRefusal(operatorId: string, asset: { code: string; scale: number }, amount: bigint, available: bigint, w: Withheld): LedgerError {
  const d = (v: bigint) => `${unitsToDecimal(v, asset.scale)}`;
  const now = payableNow(available, w);
  const head = `operator ${operatorId} can be paid ${d(now)} ${asset.code} now, less than the ${d(amount)} asked for: `;
  if (amount > available - w.awaiting.total) {
    const message = `${head}the rest of its available ${d(available)} is earnings whose money has not been received (${describeAwaiting(w.awaiting, asset)})`;
    return new LedgerError("payout_unfunded", message, [{ path: "amount", message }]);
  }
  const parts = [
    ...(w.held > 0n ? [`${d(w.held)} ${asset.code} of its earnings are held by open disputes`] : []),
    ...(w.receivable > 0n ? [`it owes ${d(w.receivable)} ${asset.code} to the platform (its receivable, recovered from its earnings first)`] : []),
    ...w.owedElsewhere.map(
      (o) =>
        `it owes ${unitsToDecimal(o.owed, o.scale)} ${o.assetCode} to the platform (its ${o.assetCode} receivable, recovered from its ${o.assetCode} earnings): nothing is paid in any asset while it owes`,
    ),
  ];
  const message = head + parts.join(", and ");
  return new LedgerError("payout_withheld", message, [{ path: "amount", message }]);
}

export interface MarketplaceFunding {
  marketplaceId: string;
  assetId: string;
  /** Its customers' own money received (on-chain deposits, receipts for a customer). */
  customersReceived: bigint;
  /** Its settlements: receipts from the marketplace. */
  settled: bigint;
  creditLimit: bigint;
  /** Deposits it claimed for its customers off-chain, less its settlements: what it holds of the platform's money. */
  claimedUnsettled: bigint;
  /** Gross of its usage not reversed. */
  usageGross: bigint;
  /** Gross of that usage not yet covered by money received (nor by the credit limit). */
  awaitingGross: bigint;
}

/** A marketplace's funding, as shown (GET /v1/marketplaces/{id}/funding/{asset}). */
export async function marketplaceFunding(db: Queryable, marketplaceId: string, assetId: string): Promise<MarketplaceFunding> {
  const pool = await marketplacePool(db, marketplaceId, assetId);
  const row = await marketplaceFundingTotals(db, marketplaceId, assetId);
  const unfunded = await unfundedUsage(db, marketplaceId, assetId, null, { shown: true });
  return {
    marketplaceId,
    assetId,
    customersReceived: BigInt(row!.received),
    settled: pool.settled,
    creditLimit: pool.creditLimit,
    claimedUnsettled: BigInt(row!.clearing),
    usageGross: BigInt(row!.usage),
    awaitingGross: unfunded.reduce((s, u) => s + u.gross, 0n),
  };
}

export interface PaidBeyondFunds {
  operatorId: string;
  assetId: string;
  available: bigint;
  awaiting: bigint;
}

/**
 * Operators that were paid (or are being paid) out of earnings whose money has not been received:
 * their available balance no longer holds their earnings awaiting funds. All of them (`npm run
 * verify`), or those selling through one marketplace in one asset (before a credit limit is lowered).
 */
export async function paidBeyondFunds(db: Queryable, scope: { marketplaceId: string; assetId: string } | null = null): Promise<PaidBeyondFunds[]> {
  const payables = await payablesOfPaidOperators(db, scope);
  const out: PaidBeyondFunds[] = [];
  for (const p of payables) {
    const awaiting = (await awaitingFunds(db, p.owner_id, p.asset_id)).total;
    if (BigInt(p.available) < awaiting) out.push({ operatorId: p.owner_id, assetId: p.asset_id, available: BigInt(p.available), awaiting });
  }
  return out;
}
