import type { Settlement, Settlements } from "../chain/settlement.js";
import type { Database, Queryable } from "../db/client.js";
import { ensureAccounts } from "../db/ensure-accounts.js";
import { chart, specKey } from "../domain/chart.js";
import { getAssetByCode } from "../db/queries/assets.js";
import { lockPayoutLimits } from "../db/queries/payout-policies.js";
import { type Asset } from "../domain/assets.js";
import { writeTransfers, type BatchOutcome } from "../db/transfer-writer.js";
import { dropQueuedPaid, sweepRateLocks } from "./rate-lock-sweep.js";
import { LedgerError } from "../domain/errors.js";
import { uuidFromKey } from "../domain/ids.js";
import { deploymentId } from "../db/queries/deployment.js";
import type { TransferInput } from "../domain/transfers.js";
import type { WriteReceipt } from "../db/queries/write-receipts.js";
import { lockOperatorFunds, payableNow, payoutRefusal, withheldEarnings } from "./funding.js";
import { getOperator } from "./marketplaces.js";
import { proposePayoutApproval } from "./proposals.js";
import {
  getAvailableBalance,
  getPayout,
  getPayoutAddress,
  getPayoutIdByHold,
  hasNoOverdraftLimit,
  insertPayout,
  lockOperatorPayoutDay,
  payoutExists,
  recordPayoutEvents,
  setPayoutNote,
  sumPayoutsNotFailed,
  type Payout,
} from "../db/queries/payouts.js";
import { getOperatorPayoutLimits, getPayoutPolicy, lowerCap, type PayoutPolicy } from "./payout-policies.js";
import { checkSplitsPayable, converts, currentPreference } from "./payout-preferences.js";
import type { PayoutSplit } from "../db/queries/payout-row.js";

export { getPayout, listPayouts, PAYOUT_SELECT, toPayout, type Payout, type PayoutFilter } from "../db/queries/payouts.js";

/** The settlement route of an asset's ledger accounts: the chain id, or "offchain". */
export const routeOf = (p: { settlement: "evm" | "none" | "convert"; chainId: bigint | null }) =>
  p.settlement === "evm" ? p.chainId!.toString() : p.settlement === "convert" ? "convert" : "offchain";

export interface CreatePayoutInput {
  operatorId: string;
  asset: string;
  amount: bigint;
  trigger: "request" | "schedule";
  /** The API key (or "scheduler") that asked for it. */
  requestedBy: string;
  idempotencyKey: string;
  /** The receipt of the API call that asked for it, written with the payout. */
  receipt?: WriteReceipt<void>;
}

/**
 * Creates a payout: a ledger hold (pending transfer) of `amount` from the operator's payable to
 * payouts in transit, and the payout row, in one transaction. The payable cannot be overdrawn
 * (its no-overdraft limit counts pending debits), so concurrent requests can never hold more than
 * the operator's available balance. The same idempotency key returns the same payout.
 */
export async function createPayout(db: Database, settlements: Settlements, input: CreatePayoutInput): Promise<{ payout: Payout; replayed: boolean }> {
  const { asset, route } = await assetAndRoute(db, settlements, input);
  const policy = await getPayoutPolicy(db, asset.id);
  const daily = await checkCaps(db, input, asset, policy);
  const destination = await destinationOf(db, settlements, input, asset, route);
  // Derived from the request (a retry makes the same id) and this ledger's deployment id: two
  // ledgers sharing a vault never pay under one id.
  const id = await payoutIdFor(db, input.idempotencyKey);
  const request: CheckedPayout = { input, asset, policy, daily, destination, id };
  const [result] = await writeTransfers(db, (tx) => holdRequest(tx, db, request), {
    afterWrite: (tx, [outcome], bookedAt) => recordPayout(tx, request, outcome, bookedAt),
    receipt: input.receipt,
  });
  if (!result!.ok) throw result!.error;
  const payoutId = await getPayoutIdByHold(db, result!.transfer.id);
  return { payout: (await getPayout(db, payoutId))!, replayed: result!.replayed };
}

/**
 * A payout request checked before its transaction: what it pays, under which policy and daily cap,
 * where to, and its id. The policy and the caps are read again in the transaction, under their
 * lock (holdRequest), and those are the ones it is written under.
 */
interface CheckedPayout {
  input: CreatePayoutInput;
  asset: Asset;
  policy: PayoutPolicy;
  /** The daily cap that applies (the lower of the policy's and the operator's own), and whose it is. */
  daily: { cap: bigint; whose: string } | null;
  destination: { settlement: "evm" | "none" | "convert"; chainId: bigint | null; toAddress: string | null; splits?: PayoutSplit[] };
  id: string;
}

/** How an asset this service can pay out settles. */
type PayableRoute = Exclude<Settlement, { kind: "unconfigured" }>;

/** The asset and how it settles; refuses an unknown asset or operator, or a chain this service does not pay on. */
async function assetAndRoute(db: Database, settlements: Settlements, input: CreatePayoutInput): Promise<{ asset: Asset; route: PayableRoute }> {
  const asset = await getAssetByCode(db, input.asset);
  if (!asset) throw new LedgerError("asset_not_found", `asset ${input.asset} does not exist`, [{ path: "asset", message: "does not exist" }]);
  if (!(await getOperator(db, input.operatorId))) {
    throw new LedgerError("operator_not_found", `operator ${input.operatorId} does not exist`, [{ path: "operatorId", message: "does not exist" }]);
  }
  const route = settlements.forAsset(asset);
  if (route.kind === "unconfigured") {
    throw new LedgerError(
      "chain_not_configured",
      route.reason ?? `asset ${asset.code} settles on chain ${route.chainId}, which this service is not configured to pay on`,
    );
  }
  return { asset, route };
}

/**
 * The policy's minimum and the per-payout cap (the operator's own caps and the asset's policy: the
 * lower applies); answers the daily cap, checked inside the transaction.
 */
async function checkCaps(db: Queryable, input: CreatePayoutInput, asset: Asset, policy: PayoutPolicy): Promise<CheckedPayout["daily"]> {
  if (input.amount < policy.minAmount) {
    throw new LedgerError("payout_below_minimum", `the smallest payout of ${asset.code} is ${policy.minAmount} (in its smallest units)`, [
      { path: "amount", message: `must be at least ${policy.minAmount}` },
    ]);
  }
  const own = await getOperatorPayoutLimits(db, input.operatorId, asset.id);
  const maxPerPayout = lowerCap(policy.maxPerPayout, own.maxPerPayout);
  const maxPerDay = lowerCap(policy.maxPerDay, own.maxPerDay);
  const whose = (cap: bigint, mine: bigint | null, field: string) =>
    mine === cap ? `operator ${input.operatorId}'s own ${field}` : `the payout policy's ${field}`;
  if (maxPerPayout !== null && input.amount > maxPerPayout) {
    const message = `the largest payout of ${asset.code} is ${maxPerPayout} (in its smallest units; ${whose(maxPerPayout, own.maxPerPayout, "max_per_payout")})`;
    throw new LedgerError("payout_limit_exceeded", message, [{ path: "amount", message }]);
  }
  return maxPerDay === null ? null : { cap: maxPerDay, whose: whose(maxPerDay, own.maxPerDay, "max_per_day") };
}

/**
 * Where the payout goes: into the assets of the operator's payout preference, converted when it is
 * paid (docs/settlement.md); on chain, to the operator's verified payout address there; or off-chain.
 */
async function destinationOf(
  db: Database,
  settlements: Settlements,
  input: CreatePayoutInput,
  asset: Asset,
  route: PayableRoute,
): Promise<CheckedPayout["destination"]> {
  const preference = await currentPreference(db, input.operatorId, asset.id);
  if (converts(preference)) {
    await checkSplitsPayable(db, settlements, input.operatorId, preference.splits);
    return { settlement: "convert", chainId: null, toAddress: null, splits: preference.splits };
  }
  if (route.kind !== "evm") return { settlement: "none", chainId: null, toAddress: null };
  const chainId = route.chain.chainId;
  const address = await getPayoutAddress(db, input.operatorId, chainId);
  if (address === undefined) {
    throw new LedgerError("payout_address_missing", `operator ${input.operatorId} has no verified payout address on chain ${chainId}`, [
      { path: "operatorId", message: "has no verified payout address on this chain" },
    ]);
  }
  return { settlement: "evm", chainId, toAddress: address };
}

/**
 * Inside the transaction: the payout limits in force (read again under their lock, taken shared: a
 * change approved since the checks before the transaction applies, and one approved now waits for
 * this request's commit), the daily cap, the accounts, the funding check, and the hold request
 * (payable → in transit).
 */
async function holdRequest(tx: Queryable, db: Database, request: CheckedPayout): Promise<TransferInput[]> {
  const { input, asset, destination, id } = request;
  await lockPayoutLimits(tx, asset.id, "shared");
  request.policy = await getPayoutPolicy(tx, asset.id);
  request.daily = await checkCaps(tx, input, asset, request.policy);
  const daily = request.daily;
  const payable = chart.operatorPayable(asset.id, input.operatorId);
  const inTransit = chart.payoutsInTransit(asset.id, routeOf(destination));
  if (daily !== null) await checkDailyCap(tx, db.clock.now(), input, asset.id, asset.code, daily.cap, daily.whose, id);
  const accounts = await ensureAccounts(tx, [payable, inTransit]);
  // The hold relies on the payable's no-overdraft limit; an account opened by hand without it
  // (POST /v1/accounts) must not be paid out from.
  if (!(await hasNoOverdraftLimit(tx, accounts.get(specKey(payable))))) {
    throw new LedgerError(
      "invalid_request",
      `operator ${input.operatorId}'s ${asset.code} payable account was opened without the no-overdraft limit (debits_must_not_exceed_credits); payouts from it are refused`,
    );
  }
  await checkFunded(tx, input, asset, accounts.get(specKey(payable))!, id);
  return [
    {
      kind: "pending",
      idempotencyKey: input.idempotencyKey,
      metadata: { payout: { id, operator_id: input.operatorId } },
      legs: [{ debitAccountId: accounts.get(specKey(payable))!, creditAccountId: accounts.get(specKey(inTransit))!, amount: input.amount }],
    },
  ];
}

/**
 * Inside the transaction, once the ledger has decided: a refused hold is refused (insufficient
 * funds told in the operator's terms); a created one gets its payout row, its first event and,
 * above the policy's approval threshold, a proposal for a second key to approve it before it is paid.
 */
async function recordPayout(
  tx: Queryable,
  { input, asset, policy, destination: { settlement, chainId, toAddress, splits }, id }: CheckedPayout,
  outcome: BatchOutcome | undefined,
  bookedAt: Date,
): Promise<void> {
  if (outcome?.kind === "refused") {
    const e = outcome.error;
    if (e.code === "exceeds_credits") {
      throw new LedgerError("exceeds_credits", `the operator's available ${asset.code} balance is less than ${input.amount}`, [
        { path: "amount", message: "exceeds the available balance" },
      ]);
    }
    throw e;
  }
  if (outcome?.kind !== "created") return;
  // Above the policy's approval threshold, a second key approves the payout before it is paid.
  const needsApproval = policy.approvalThreshold !== null && input.amount > policy.approvalThreshold;
  await insertPayout(tx, {
    id,
    operatorId: input.operatorId,
    assetId: asset.id,
    settlement,
    chainId,
    toAddress,
    amount: input.amount,
    trigger: input.trigger,
    requestedBy: input.requestedBy,
    holdTransferId: outcome.transfer.id,
    createdAt: bookedAt,
    approval: needsApproval ? "required" : null,
    ...(splits === undefined ? {} : { splits }),
  });
  await recordPayoutEvents(tx, [id], "pending", bookedAt, { trigger: input.trigger, requested_by: input.requestedBy });
  // Earnings held for this payout can no longer be locked into an asset it does not convert into:
  // paid as they are, the operator's queued records it pays are not locked afterwards, and its open
  // rate locks are kept within what is left (docs/settlement.md, "Rate policy"). A convert payout's
  // records are dropped when it is converted, as far as the rate of the moment pays it.
  if (settlement !== "convert") await dropQueuedPaid(tx, input.operatorId, asset.id, input.amount);
  await sweepRateLocks(tx, input.operatorId, asset.id);
  if (needsApproval) {
    const proposal = await proposePayoutApproval(tx, {
      now: bookedAt,
      by: input.requestedBy,
      payoutId: id,
      operatorId: input.operatorId,
      asset: asset.code,
      amount: input.amount,
      destination: { settlement, chainId, toAddress },
    });
    await setPayoutNote(tx, id, `awaiting approval: above the policy's approval threshold of ${policy.approvalThreshold} (proposal ${proposal.id})`);
  }
}

/**
 * Only money that came in goes out: the payout may take at most the operator's payable-now, its
 * available balance less the earnings whose money has not been received, less what open disputes
 * hold and what it owes the platform (src/services/funding.ts).
 * Taken under a transaction-scoped lock per operator and asset, so that concurrent requests of one
 * operator are judged one after the other.
 */
async function checkFunded(tx: Queryable, input: CreatePayoutInput, asset: Asset, payableId: string, payoutId: string): Promise<void> {
  await lockOperatorFunds(tx, input.operatorId, asset.id);
  // A retry of a payout that exists replays it: its own hold is already out of the balance.
  if (await payoutExists(tx, payoutId)) return;
  const available = await getAvailableBalance(tx, payableId);
  if (input.amount > available) return; // refused by the payable's no-overdraft limit, as before
  // Less what waits for money, what open disputes hold and what the operator owes back (funding.ts).
  const withheld = await withheldEarnings(tx, input.operatorId, asset.id);
  if (input.amount > payableNow(available, withheld)) throw payoutRefusal(input.operatorId, asset, input.amount, available, withheld);
}

/** The id of the payout a request makes: from its idempotency key and this ledger's deployment id. */
export async function payoutIdFor(db: Queryable, idempotencyKey: string): Promise<string> {
  return uuidFromKey(`payout:${await deploymentId(db)}:${idempotencyKey}`);
}

/** The UTC day of `now`: [start, end). */
export function utcDay(now: Date): { start: Date; end: Date } {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  return { start, end: new Date(start.getTime() + 86_400_000) };
}

/**
 * What an operator may still be paid of an asset today under a daily cap: the cap less the payouts
 * asked for since the start of the UTC day that did not fail (a retry of the same request is not
 * counted twice: it replays). Taken under a transaction-scoped lock per operator and asset, so that
 * concurrent requests are counted one after the other.
 */
async function checkDailyCap(
  tx: Queryable,
  now: Date,
  input: CreatePayoutInput,
  assetId: string,
  assetCode: string,
  cap: bigint,
  whose: string,
  payoutId: string,
): Promise<void> {
  await lockOperatorPayoutDay(tx, input.operatorId, assetId);
  const { start, end } = utcDay(now);
  const left = cap - (await sumPayoutsNotFailed(tx, input.operatorId, assetId, start, end, payoutId));
  if (input.amount > left) {
    const message = `operator ${input.operatorId} may be paid at most ${cap} ${assetCode} a day (${whose}); ${left > 0n ? left : 0n} is left today (UTC)`;
    throw new LedgerError("payout_limit_exceeded", message, [{ path: "amount", message }]);
  }
}
