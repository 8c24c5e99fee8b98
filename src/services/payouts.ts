import type { Settlements } from "../chain/settlement.js";
import type { Database, Queryable } from "../db/client.js";
import { ensureAccounts } from "../db/ensure-accounts.js";
import { chart, specKey } from "../domain/chart.js";
import { getAssetByCode } from "../db/queries/assets.js";
import { type Asset } from "../domain/assets.js";
import { pgArray } from "../db/sql-arrays.js";
import { writeTransfers } from "../db/transfer-writer.js";
import { LedgerError } from "../domain/errors.js";
import { uuidFromKey } from "../domain/ids.js";
import { deploymentId } from "../db/queries/deployment.js";
import type { PayoutStatus } from "../domain/payouts.js";
import type { TransferInput } from "../domain/transfers.js";
import { unitsToDecimal } from "../domain/money.js";
import { awaitingFunds, describeAwaiting, lockOperatorFunds, payableNow } from "./funding.js";
import { getOperator } from "./marketplaces.js";
import { proposePayoutApproval } from "./proposals.js";
import { failPayouts, throwIfRefused } from "./fail-payouts.js";
import { recordPayoutEvents } from "../db/queries/payouts.js";
import { getOperatorPayoutLimits, getPayoutPolicy, lowerCap } from "./payout-policies.js";

export interface Payout {
  id: string;
  operatorId: string;
  assetId: string;
  assetCode: string;
  settlement: "evm" | "none";
  chainId: bigint | null;
  toAddress: string | null;
  amount: bigint;
  status: PayoutStatus;
  trigger: "request" | "schedule";
  requestedBy: string;
  holdTransferId: string;
  settleTransferId: string | null;
  chainTxId: string | null;
  txHash: string | null;
  blockNumber: bigint | null;
  logIndex: number | null;
  externalReference: string | null;
  unpaidAttempts: number;
  failureReason: string | null;
  note: string | null;
  /** null: no approval needed; required: waits for a second key; approved. */
  approval: "required" | "approved" | null;
  createdAt: Date;
  updatedAt: Date;
  confirmedAt: Date | null;
}

type Row = {
  id: string; operator_id: string; asset_id: string; asset_code: string; settlement: "evm" | "none"; chain_id: string | null;
  to_address: string | null; amount: string; status: PayoutStatus; trigger: "request" | "schedule"; requested_by: string;
  hold_transfer_id: string; settle_transfer_id: string | null; chain_tx_id: string | null; tx_hash: string | null;
  block_number: string | null; log_index: number | null; external_reference: string | null; unpaid_attempts: number;
  failure_reason: string | null; note: string | null; approval: "required" | "approved" | null; created_at: Date | string; updated_at: Date | string; confirmed_at: Date | string | null;
};

export const PAYOUT_SELECT = `select p.id, p.operator_id, p.asset_id, s.code as asset_code, p.settlement, p.chain_id::text as chain_id, p.to_address,
  p.amount::text as amount, p.status, p.trigger, p.requested_by, p.hold_transfer_id, p.settle_transfer_id, p.chain_tx_id, p.tx_hash,
  p.block_number::text as block_number, p.log_index, p.external_reference, p.unpaid_attempts, p.failure_reason, p.note, p.approval,
  p.created_at, p.updated_at, p.confirmed_at
  from payouts p join assets s on s.id = p.asset_id`;

export function toPayout(r: Row): Payout {
  return {
    id: r.id, operatorId: r.operator_id, assetId: r.asset_id, assetCode: r.asset_code, settlement: r.settlement,
    chainId: r.chain_id === null ? null : BigInt(r.chain_id), toAddress: r.to_address, amount: BigInt(r.amount), status: r.status,
    trigger: r.trigger, requestedBy: r.requested_by, holdTransferId: r.hold_transfer_id, settleTransferId: r.settle_transfer_id,
    chainTxId: r.chain_tx_id, txHash: r.tx_hash, blockNumber: r.block_number === null ? null : BigInt(r.block_number), logIndex: r.log_index,
    externalReference: r.external_reference, unpaidAttempts: r.unpaid_attempts, failureReason: r.failure_reason, note: r.note, approval: r.approval,
    createdAt: new Date(r.created_at), updatedAt: new Date(r.updated_at), confirmedAt: r.confirmed_at === null ? null : new Date(r.confirmed_at),
  };
}

export async function getPayout(db: Queryable, id: string): Promise<Payout | undefined> {
  const rows = await db.query<Row>(`${PAYOUT_SELECT} where p.id = $1`, [id]);
  return rows[0] && toPayout(rows[0]);
}

export interface PayoutFilter {
  operatorId?: string;
  assetId?: string;
  status?: PayoutStatus;
  chainId?: bigint;
  from?: Date;
  to?: Date;
  after?: string;
  limit: number;
}

/** Payouts in creation order (ids are time-ordered), filtered. */
export async function listPayouts(db: Queryable, f: PayoutFilter): Promise<Payout[]> {
  const rows = await db.query<Row>(
    `${PAYOUT_SELECT}
      where ($1::text is null or p.operator_id = $1) and ($2::uuid is null or p.asset_id = $2) and ($3::text is null or p.status = $3)
        and ($4::bigint is null or p.chain_id = $4) and ($5::timestamptz is null or p.created_at >= $5)
        and ($6::timestamptz is null or p.created_at < $6) and ($7::uuid is null or p.id > $7)
      order by p.id limit $8`,
    [f.operatorId ?? null, f.assetId ?? null, f.status ?? null, f.chainId?.toString() ?? null, f.from?.toISOString() ?? null,
      f.to?.toISOString() ?? null, f.after ?? null, f.limit],
  );
  return rows.map(toPayout);
}

/** The settlement route of an asset's ledger accounts: the chain id, or "offchain". */
export const routeOf = (p: { settlement: "evm" | "none"; chainId: bigint | null }) => (p.settlement === "evm" ? p.chainId!.toString() : "offchain");

export interface CreatePayoutInput {
  operatorId: string;
  asset: string;
  amount: bigint;
  trigger: "request" | "schedule";
  /** The API key (or "scheduler") that asked for it. */
  requestedBy: string;
  idempotencyKey: string;
}

/**
 * Creates a payout: a ledger hold (pending transfer) of `amount` from the operator's payable to
 * payouts in transit, and the payout row, in one transaction. The payable cannot be overdrawn
 * (its no-overdraft limit counts pending debits), so concurrent requests can never hold more than
 * the operator's available balance. The same idempotency key returns the same payout.
 */
export async function createPayout(db: Database, settlements: Settlements, input: CreatePayoutInput): Promise<{ payout: Payout; replayed: boolean }> {
  const asset = await getAssetByCode(db, input.asset);
  if (!asset) throw new LedgerError("asset_not_found", `asset ${input.asset} does not exist`, [{ path: "asset", message: "does not exist" }]);
  if (!(await getOperator(db, input.operatorId))) {
    throw new LedgerError("operator_not_found", `operator ${input.operatorId} does not exist`, [{ path: "operatorId", message: "does not exist" }]);
  }
  const route = settlements.forAsset(asset);
  if (route.kind === "unconfigured") {
    throw new LedgerError("chain_not_configured", route.reason ?? `asset ${asset.code} settles on chain ${route.chainId}, which this service is not configured to pay on`);
  }
  const policy = await getPayoutPolicy(db, asset.id);
  if (input.amount < policy.minAmount) {
    throw new LedgerError("payout_below_minimum", `the smallest payout of ${asset.code} is ${policy.minAmount} (in its smallest units)`, [
      { path: "amount", message: `must be at least ${policy.minAmount}` },
    ]);
  }
  // The operator's own caps and the asset's policy: the lower applies.
  const own = await getOperatorPayoutLimits(db, input.operatorId, asset.id);
  const maxPerPayout = lowerCap(policy.maxPerPayout, own.maxPerPayout);
  const maxPerDay = lowerCap(policy.maxPerDay, own.maxPerDay);
  const whose = (cap: bigint, mine: bigint | null, field: string) =>
    mine === cap ? `operator ${input.operatorId}'s own ${field}` : `the payout policy's ${field}`;
  if (maxPerPayout !== null && input.amount > maxPerPayout) {
    const message = `the largest payout of ${asset.code} is ${maxPerPayout} (in its smallest units; ${whose(maxPerPayout, own.maxPerPayout, "max_per_payout")})`;
    throw new LedgerError("payout_limit_exceeded", message, [{ path: "amount", message }]);
  }
  let toAddress: string | null = null;
  let chainId: bigint | null = null;
  if (route.kind === "evm") {
    chainId = route.chain.chainId;
    const rows = await db.query<{ address: string }>("select address from payout_addresses where operator_id = $1 and chain_id = $2", [input.operatorId, chainId.toString()]);
    if (!rows[0]) {
      throw new LedgerError("payout_address_missing", `operator ${input.operatorId} has no verified payout address on chain ${chainId}`, [
        { path: "operatorId", message: "has no verified payout address on this chain" },
      ]);
    }
    toAddress = rows[0].address;
  }
  const settlement = route.kind === "evm" ? "evm" : "none";
  // Derived from the request (a retry makes the same id) and this ledger's deployment id: two
  // ledgers sharing a vault never pay under one id.
  const id = await payoutIdFor(db, input.idempotencyKey);
  const payable = chart.operatorPayable(asset.id, input.operatorId);
  const inTransit = chart.payoutsInTransit(asset.id, routeOf({ settlement, chainId }));
  const [result] = await writeTransfers(db, async (tx) => {
    if (maxPerDay !== null) await checkDailyCap(tx, db.clock.now(), input, asset.id, asset.code, maxPerDay, whose(maxPerDay, own.maxPerDay, "max_per_day"), id);
    const accounts = await ensureAccounts(tx, [payable, inTransit]);
    // The hold relies on the payable's no-overdraft limit; an account opened by hand without it
    // (POST /v1/accounts) must not be paid out from.
    const [flags] = await tx.query<{ dmnec: boolean }>("select debits_must_not_exceed_credits as dmnec from accounts where id = $1", [accounts.get(specKey(payable))]);
    if (!flags?.dmnec) {
      throw new LedgerError("invalid_request", `operator ${input.operatorId}'s ${asset.code} payable account was opened without the no-overdraft limit (debits_must_not_exceed_credits); payouts from it are refused`);
    }
    await checkFunded(tx, input, asset, accounts.get(specKey(payable))!, id);
    return [{
      kind: "pending", idempotencyKey: input.idempotencyKey, metadata: { payout: { id, operator_id: input.operatorId } },
      legs: [{ debitAccountId: accounts.get(specKey(payable))!, creditAccountId: accounts.get(specKey(inTransit))!, amount: input.amount }],
    }];
  }, {
    afterWrite: async (tx, [outcome], bookedAt) => {
      if (outcome?.kind === "refused") {
        const e = outcome.error;
        if (e.code === "exceeds_credits") {
          throw new LedgerError("exceeds_credits", `the operator's available ${asset.code} balance is less than ${input.amount}`, [{ path: "amount", message: "exceeds the available balance" }]);
        }
        throw e;
      }
      if (outcome?.kind !== "created") return;
      // Above the policy's approval threshold, a second key approves the payout before it is paid.
      const needsApproval = policy.approvalThreshold !== null && input.amount > policy.approvalThreshold;
      await tx.query(
        `insert into payouts (id, operator_id, asset_id, settlement, chain_id, to_address, amount, status, trigger, requested_by, hold_transfer_id, created_at, updated_at, approval)
         values ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, $9, $10, $11, $11, $12)`,
        [id, input.operatorId, asset.id, settlement, chainId?.toString() ?? null, toAddress, input.amount.toString(), input.trigger, input.requestedBy, outcome.transfer.id,
          bookedAt.toISOString(), needsApproval ? "required" : null]);
      await recordPayoutEvents(tx, [id], "pending", bookedAt, { trigger: input.trigger, requested_by: input.requestedBy });
      if (needsApproval) {
        const proposal = await proposePayoutApproval(tx, bookedAt, input.requestedBy, { payoutId: id, operatorId: input.operatorId, asset: asset.code, amount: input.amount });
        await tx.query("update payouts set note = $2 where id = $1",
          [id, `awaiting approval: above the policy's approval threshold of ${policy.approvalThreshold} (proposal ${proposal.id})`]);
      }
    },
  });
  if (!result!.ok) throw result!.error;
  const rows = await db.query<{ id: string }>("select id from payouts where hold_transfer_id = $1", [result!.transfer.id]);
  return { payout: (await getPayout(db, rows[0]!.id))!, replayed: result!.replayed };
}

/**
 * Only money that came in goes out: the payout may take at most the operator's payable-now, its
 * available balance less the earnings whose money has not been received (src/services/funding.ts).
 * Taken under a transaction-scoped lock per operator and asset, so that concurrent requests of one
 * operator are judged one after the other.
 */
async function checkFunded(tx: Queryable, input: CreatePayoutInput, asset: Asset, payableId: string, payoutId: string): Promise<void> {
  await lockOperatorFunds(tx, input.operatorId, asset.id);
  // A retry of a payout that exists replays it: its own hold is already out of the balance.
  if ((await tx.query("select 1 from payouts where id = $1", [payoutId])).length > 0) return;
  const [b] = await tx.query<{ available: string }>(
    "select (credits_posted - debits_posted - debits_pending)::text as available from account_balances where account_id = $1", [payableId]);
  const available = BigInt(b!.available);
  if (input.amount > available) return; // refused by the payable's no-overdraft limit, as before
  const awaiting = await awaitingFunds(tx, input.operatorId, asset.id);
  const now = payableNow(available, awaiting);
  if (input.amount > now) {
    const message = `operator ${input.operatorId} can be paid ${unitsToDecimal(now, asset.scale)} ${asset.code} now, less than the ${unitsToDecimal(input.amount, asset.scale)} asked for: `
      + `the rest of its available ${unitsToDecimal(available, asset.scale)} is earnings whose money has not been received (${describeAwaiting(awaiting, asset)})`;
    throw new LedgerError("payout_unfunded", message, [{ path: "amount", message }]);
  }
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
async function checkDailyCap(tx: Queryable, now: Date, input: CreatePayoutInput, assetId: string, assetCode: string, cap: bigint, whose: string, payoutId: string): Promise<void> {
  await tx.query("select pg_advisory_xact_lock(hashtextextended($1, 0))", [`payout-day:${input.operatorId}:${assetId}`]);
  const { start, end } = utcDay(now);
  const [row] = await tx.query<{ sum: string }>(
    `select coalesce(sum(amount), 0)::text as sum from payouts
      where operator_id = $1 and asset_id = $2 and status <> 'failed' and created_at >= $3 and created_at < $4 and id <> $5`,
    [input.operatorId, assetId, start.toISOString(), end.toISOString(), payoutId]);
  const left = cap - BigInt(row!.sum);
  if (input.amount > left) {
    const message = `operator ${input.operatorId} may be paid at most ${cap} ${assetCode} a day (${whose}); ${left > 0n ? left : 0n} is left today (UTC)`;
    throw new LedgerError("payout_limit_exceeded", message, [{ path: "amount", message }]);
  }
}

/** Cancels a payout that no chain transaction has taken yet. */
export async function cancelPayout(db: Database, id: string, by: string): Promise<Payout> {
  const p = await getPayout(db, id);
  if (!p) throw new LedgerError("payout_not_found", `payout ${id} does not exist`);
  const failed = await failPayouts(db, [id], `cancelled by ${by}`, ["pending"]);
  if (failed.length === 0) {
    const now = (await getPayout(db, id))!;
    throw new LedgerError("payout_not_pending", `payout ${id} is ${now.status}: only pending payouts can be cancelled`);
  }
  return (await getPayout(db, id))!;
}

/**
 * Confirms payouts that were paid: posts each hold (payable → in transit becomes final) and moves
 * the amount from in transit out of the treasury, all in one transaction with `alsoInTx`.
 * `details` gives each payout's chain facts (or external reference).
 */
export async function confirmPayouts(
  db: Database,
  payouts: Payout[],
  details: Map<string, { txHash?: string; blockNumber?: bigint; logIndex?: number; externalReference?: string }>,
  from: PayoutStatus[],
  extra: TransferInput[] = [],
  alsoInTx?: (tx: Queryable) => Promise<void>,
): Promise<string[]> {
  let confirmed: Payout[] = [];
  const specs = new Map<string, string>();
  const [first] = await writeTransfers(db, async (tx) => {
    const rows = await tx.query<{ id: string }>(
      "select id from payouts where id = any($1::uuid[]) and status = any($2::text[]) order by id for update",
      [pgArray(payouts.map((p) => p.id)), pgArray(from)]);
    const open = new Set(rows.map((r) => r.id));
    confirmed = payouts.filter((p) => open.has(p.id));
    const wanted = confirmed.flatMap((p) => [chart.payoutsInTransit(p.assetId, routeOf(p)), chart.treasury(p.assetId, routeOf(p))]);
    const ids = await ensureAccounts(tx, wanted);
    for (const [k, v] of ids) specs.set(k, v);
    return [
      ...confirmed.flatMap((p): TransferInput[] => [
        { kind: "post_pending", pendingId: p.holdTransferId, idempotencyKey: `payout:${p.id}:post`, metadata: { payout: { id: p.id } } },
        {
          kind: "standard", idempotencyKey: `payout:${p.id}:settle`,
          metadata: { payout: { id: p.id, tx_hash: details.get(p.id)?.txHash ?? null, external_reference: details.get(p.id)?.externalReference ?? null } },
          legs: [{
            debitAccountId: specs.get(specKey(chart.payoutsInTransit(p.assetId, routeOf(p))))!,
            creditAccountId: specs.get(specKey(chart.treasury(p.assetId, routeOf(p))))!, amount: p.amount,
          }],
        },
      ]),
      ...(confirmed.length > 0 ? extra : []),
    ];
  }, {
    afterWrite: async (tx, outcomes, bookedAt) => {
      throwIfRefused(outcomes);
      for (const [i, p] of confirmed.entries()) {
        const settle = outcomes[i * 2 + 1]!;
        const settleId = settle.kind === "created" ? settle.transfer.id : settle.kind === "replayed" ? settle.id : null;
        const d = details.get(p.id) ?? {};
        await tx.query(
          `update payouts set status = 'confirmed', settle_transfer_id = $2, tx_hash = coalesce($3, tx_hash), block_number = coalesce($4, block_number),
                  log_index = coalesce($5, log_index), external_reference = coalesce($6, external_reference), note = null,
                  confirmed_at = $7, updated_at = $7
            where id = $1`,
          [p.id, settleId, d.txHash ?? null, d.blockNumber?.toString() ?? null, d.logIndex ?? null, d.externalReference ?? null, bookedAt.toISOString()]);
      }
      await recordPayoutEvents(tx, confirmed.map((p) => p.id), "confirmed", bookedAt);
      if (confirmed.length > 0) await alsoInTx?.(tx);
    },
  });
  if (first && !first.ok) throw first.error;
  return confirmed.map((p) => p.id);
}

/** Off-chain settlement: finance paid the operator by other means and records the reference. */
export async function markPayoutPaid(db: Database, id: string, reference: string): Promise<Payout> {
  const p = await getPayout(db, id);
  if (!p) throw new LedgerError("payout_not_found", `payout ${id} does not exist`);
  if (p.settlement !== "none") {
    throw new LedgerError("invalid_request", `payout ${id} settles on chain ${p.chainId}: the payout worker confirms it from the chain`);
  }
  if (p.status === "confirmed" && p.externalReference === reference) return p;
  if (p.approval === "required") throw new LedgerError("payout_not_approved", `payout ${id} waits for a second key's approval (${p.note}); it cannot be marked paid before`);
  const done = await confirmPayouts(db, [p], new Map([[id, { externalReference: reference }]]), ["pending"]);
  if (done.length === 0) throw new LedgerError("payout_not_pending", `payout ${id} is ${(await getPayout(db, id))!.status}`);
  return (await getPayout(db, id))!;
}
