import { paidBeyondFunds } from "./funding.js";
import { findFundingMarkMismatches } from "../db/queries/funding-marks.js";
import type { Database } from "../db/client.js";
import { sha256Hex } from "../domain/canonical.js";
import { digestRange, type SealFormat } from "../db/journal-seals.js";
import { findConversionMismatches } from "./verify-conversions.js";
import { depositedTransactions, receiptsNamingLongReferences } from "../db/queries/deposits.js";
import { txHashesIn } from "../domain/references.js";
import {
  countLedgerRows,
  findBalancesNotMatchingEntries,
  findBrokenReferences,
  findCustomerDebitTotalMismatches,
  findOperatorEarnedMismatches,
  findLimitViolations,
  findRunningBalanceMismatches,
  findTransfersWithoutEntries,
  findUnbalancedAssets,
  findUnbalancedLegs,
  findInTransitMismatches,
  findPayoutSettlementMismatches,
  findPayoutsNotMatchingHolds,
  findPayoutsToUnprovenAddresses,
  findAdjustedInflowMismatches,
  listJournalSeals,
} from "../db/queries/verify.js";

export interface Violation {
  /** Which invariant: balanced_assets, balanced_legs, balances_match_entries, running_balance, limits, customer_debit_totals, operator_earned, funding_marks, references, transfers_have_entries, payout_holds, payout_settlements, payouts_in_transit, payout_addresses, funded_payouts, received_once, adjusted_inflows, conversions, hash_chain */
  check: string;
  detail: string;
}

export interface VerifyReport {
  ok: boolean;
  violations: Violation[];
  counts: { assets: number; accounts: number; transfers: number; entries: number; seals: number };
}

const MAX_PER_CHECK = 20;

/** Adds a check's rows (at most MAX_PER_CHECK) to the report, each described. */
type Add = (check: string, rows: Record<string, unknown>[], describe: (r: Record<string, unknown>) => string) => void;

/** Checks a whole database against the ledger's invariants (docs/ledger.md). Read-only. */
export async function verifyLedger(db: Database): Promise<VerifyReport> {
  const violations: Violation[] = [];
  const add = (check: string, rows: Record<string, unknown>[], describe: (r: Record<string, unknown>) => string) => {
    for (const r of rows.slice(0, MAX_PER_CHECK)) violations.push({ check, detail: describe(r) });
  };

  add(
    "balanced_assets",
    await findUnbalancedAssets(db),
    (r) => `asset ${r.code}: total debits minus credits is ${r.posted_diff} posted and ${r.pending_diff} pending (must be 0)`,
  );

  add(
    "balanced_legs",
    await findUnbalancedLegs(db),
    (r) => `transfer ${r.transfer_id} leg ${r.leg} is not one debit and one credit of the same amount and asset`,
  );

  add("balances_match_entries", await findBalancesNotMatchingEntries(db), (r) => `account ${r.account_id}: stored balances differ from the sum of its entries`);

  add(
    "running_balance",
    await findRunningBalanceMismatches(db),
    (r) => `account ${r.account_id}: the running balance of its last entry differs from its posted balance`,
  );

  add("limits", await findLimitViolations(db), (r) => `account ${r.id}: ${r.what}, which its flags forbid`);

  await checkKeptTotals(db, add);

  add("references", await findBrokenReferences(db), (r) => String(r.what));

  add("transfers_have_entries", await findTransfersWithoutEntries(db), (r) => `transfer ${r.id} has no entries`);

  await checkPayouts(db, add);

  // Only money that came in goes out: what an operator was paid (or is being paid) never takes
  // earnings whose money has not been received, so its available balance always holds them.
  const unfunded = (await paidBeyondFunds(db)).map((p) => ({
    owner_id: p.operatorId,
    asset_id: p.assetId,
    available: p.available.toString(),
    awaiting: p.awaiting.toString(),
  }));
  add(
    "funded_payouts",
    unfunded,
    (r) =>
      `operator ${r.owner_id} (asset ${r.asset_id}) was paid out of earnings whose money has not been received: available ${r.available} is less than its ${r.awaiting} awaiting funds`,
  );

  await checkReceived(db, add);

  // Every conversion's legs agree with its stored rate (docs/settlement.md).
  add("conversions", await findConversionMismatches(db), (r) => String(r.what));

  violations.push(...(await verifyHashChain(db)));

  const counts = await countLedgerRows(db);
  return {
    ok: violations.length === 0,
    violations,
    counts: {
      assets: Number(counts.assets),
      accounts: Number(counts.accounts),
      transfers: Number(counts.transfers),
      entries: Number(counts.entries),
      seals: Number(counts.seals),
    },
  };
}

/** Money received on chain is in the books once: as a deposit, a receipt or a reconciliation adjustment, never two of them. */
async function checkReceived(db: Database, add: Add) {
  // Money received on chain is counted once: no receipt names a transaction credited as a deposit.
  add(
    "received_once",
    await findReceiptsOfDeposits(db),
    (r) => `receipt ${r.id} (reference ${JSON.stringify(r.reference)}) names transaction ${r.tx_hash}, credited to a customer as an on-chain deposit`,
  );

  // A payment into the vault a reconciliation adjustment booked is booked once, in full (docs/reconciliation.md).
  add("adjusted_inflows", await findAdjustedInflowMismatches(db), (r) =>
    r.customer_id !== null
      ? `reconciliation item ${r.id}: the payment in transaction ${r.tx_hash} (log ${r.log_index}) was adjusted into the treasury and also credited to customer ${r.customer_id} as a deposit`
      : `reconciliation item ${r.id}: the payment in transaction ${r.tx_hash} (log ${r.log_index}) of ${r.chain_amount} was adjusted for ${r.adjusted ?? "nothing"}`,
  );
}

/** The totals kept for reads (customer debits, operators' earnings, funding marks) against the rows they sum. */
async function checkKeptTotals(db: Database, add: Add) {
  add(
    "customer_debit_totals",
    await findCustomerDebitTotalMismatches(db),
    (r) => `marketplace ${r.marketplace_id}, asset ${r.asset_id}: customer debits total ${r.stored} stored, ${r.actual} in its customers' balances`,
  );

  add(
    "operator_earned",
    await findOperatorEarnedMismatches(db),
    (r) =>
      `marketplace ${r.marketplace_id}, operator ${r.operator_id}, asset ${r.asset_id}: earnings ${r.stored} kept in operator_earned, ${r.actual} in its usage records not reversed`,
  );

  add("funding_marks", await findFundingMarkMismatches(db), (r) =>
    r.customer_id === ""
      ? `marketplace ${r.marketplace_id}, asset ${r.asset_id}: funding mark at ${r.stored}, beyond the last funding_seq drawn (${r.actual})`
      : `marketplace ${r.marketplace_id}, asset ${r.asset_id}, customer ${r.customer_id}: gross ${r.stored} kept at the funding mark, ${r.actual} in its usage records up to it`,
  );
}

/**
 * What the payout worker pays (the payout's row) against the ledger: each payout holds exactly its
 * amount, a confirmed one settled exactly what it held, the in-transit accounts hold exactly the
 * payouts on their way, and each is paid to an address its operator proved.
 */
async function checkPayouts(db: Database, add: Add) {
  add("payout_holds", await findPayoutsNotMatchingHolds(db), (r) =>
    r.held === null
      ? `payout ${r.id}: amount ${r.amount}, but its hold holds nothing`
      : `payout ${r.id}: amount ${r.amount}, but its hold holds ${r.held} (or is not one leg from the operator's payable to in transit of its asset and route)`,
  );

  add(
    "payout_settlements",
    await findPayoutSettlementMismatches(db),
    (r) =>
      `payout ${r.id} is confirmed, but its hold of ${r.held ?? "nothing"} was posted as ${r.posted ?? "nothing"} and its settlement moved ${r.settled ?? "nothing"} out of in transit to the treasury`,
  );

  add(
    "payouts_in_transit",
    await findInTransitMismatches(db),
    (r) =>
      `account ${r.ref} (asset ${r.asset_id}): posted balance ${r.posted} (must be 0) and ${r.pending} pending, for ${r.in_flight} in payouts on their way out`,
  );

  add(
    "payout_addresses",
    await findPayoutsToUnprovenAddresses(db),
    (r) => `payout ${r.id} pays ${r.to_address ?? "no address"} on chain ${r.chain_id ?? "none"}, an address operator ${r.operator_id} never proved there`,
  );
}

/**
 * Receipts whose reference names (in any spelling: txHashesIn) a transaction the deposit scanner
 * credited to a customer, in the receipt's asset (in any, for a receipt in an off-chain unit).
 */
async function findReceiptsOfDeposits(db: Database): Promise<Record<string, unknown>[]> {
  // What each long reference names, by asset: one lookup of the deposits per asset.
  const named = (await receiptsNamingLongReferences(db)).flatMap((r) => txHashesIn(r.reference_key).map((h) => ({ ...r, tx_hash: h })));
  const out: Record<string, unknown>[] = [];
  for (const assetId of new Set(named.map((n) => n.asset_id))) {
    const ofAsset = named.filter((n) => n.asset_id === assetId);
    const deposited = new Set(await depositedTransactions(db, [...new Set(ofAsset.map((n) => n.tx_hash))], assetId));
    for (const n of ofAsset) if (deposited.has(n.tx_hash)) out.push({ id: n.id, reference: n.reference, tx_hash: n.tx_hash });
  }
  return out;
}

/** Recomputes every seal from the rows it covers; reports the first link that does not hold. */
export async function verifyHashChain(db: Database): Promise<Violation[]> {
  const seals = await listJournalSeals(db);
  let prev = "0".repeat(64);
  let prevTo = "0";
  for (const s of seals) {
    const fail = (why: string): Violation[] => [{ check: "hash_chain", detail: `seal ${s.id} (txids ${s.from_txid}..${s.to_txid}): ${why}` }];
    if (s.prev_hash !== prev || s.from_txid !== prevTo) return fail("does not continue the previous seal (a seal was changed or removed)");
    if (s.format !== 1 && s.format !== 2) return fail(`has an unknown digest format ${s.format}`);
    const { count, digest } = await digestRange(db, BigInt(s.from_txid), BigInt(s.to_txid), s.format as SealFormat);
    if (count !== s.transfer_count) return fail(`covers ${count} transfers now but sealed ${s.transfer_count} (rows were added or removed)`);
    if (sha256Hex(prev + digest) !== s.hash) return fail("its transfers or entries were changed after sealing");
    prev = s.hash;
    prevTo = s.to_txid;
  }
  return [];
}
