import type { Database, Queryable } from "../db/client.js";
import { ensureAccounts } from "../db/ensure-accounts.js";
import { chart, specKey } from "../domain/chart.js";
import { getAsset, getAssetByCode } from "../db/queries/assets.js";
import { type Asset } from "../domain/assets.js";
import { writeTransfers } from "../db/transfer-writer.js";
import { LedgerError } from "../domain/errors.js";
import { uuidv7 } from "../domain/ids.js";
import { isTransferAmount, unitsToDecimal } from "../domain/money.js";
import type { Principal, Role } from "../domain/access.js";
import { getCustomer, getMarketplace } from "./marketplaces.js";
import { checkAdjustment, resolveItem } from "./reconcile.js";
import { setUsageLimits } from "./usage-limits.js";
import { failPayouts } from "./fail-payouts.js";
import { recordPayoutEvents } from "../db/queries/payouts.js";
import { MAX_GROSS_PER_RECORD_CEILING, parseRate } from "../domain/usage-limits.js";
import { checkPayoutPolicy, setPayoutPolicy, type PayoutPolicyInput } from "./payout-policies.js";
import { lockReceivedTransactions } from "./chain-deposits.js";
import { paidBeyondFunds } from "./funding.js";
import { inTransaction } from "./transaction.js";

/**
 * Four eyes for manual money (docs/ledger.md, "Four eyes"). A movement of money or a limit change
 * that a person asks for is a proposal; it takes effect only when a different key, of a role
 * allowed to approve that kind, approves it. A proposal is decided once: approved (and carried out
 * in the same database transaction) or rejected. Who proposed and who decided are on the row; the
 * calls themselves are in the audit log.
 */

export const PROPOSAL_KINDS = ["receipt", "credit_limit", "customer_credit_limit", "reconciliation_adjustment", "usage_limits", "payout", "operator_payout_limits", "payout_policy"] as const;
export type ProposalKind = (typeof PROPOSAL_KINDS)[number];
export type ProposalStatus = "proposed" | "approved" | "rejected";

/** Who may propose and who may approve each kind. */
export const PROPOSAL_ROLES: Record<ProposalKind, { propose: Role[]; approve: Role[] }> = {
  receipt: { propose: ["finance", "admin"], approve: ["finance", "admin"] },
  credit_limit: { propose: ["admin"], approve: ["admin", "finance"] },
  /** A marketplace asks for its own customer's; the platform approves. */
  customer_credit_limit: { propose: ["marketplace", "admin"], approve: ["admin", "finance"] },
  operator_payout_limits: { propose: ["admin", "finance"], approve: ["admin", "finance"] },
  payout_policy: { propose: ["admin"], approve: ["admin", "finance"] },
  reconciliation_adjustment: { propose: ["finance", "admin"], approve: ["finance", "admin"] },
  usage_limits: { propose: ["admin"], approve: ["admin", "finance"] },
  /** Proposed by whoever asked for the payout (the operator, finance, the scheduler). */
  payout: { propose: ["operator", "finance", "admin"], approve: ["finance", "admin"] },
};

export interface Proposal {
  id: string;
  kind: ProposalKind;
  marketplaceId: string | null;
  payload: Record<string, unknown>;
  proposedBy: string;
  proposedAt: Date;
  status: ProposalStatus;
  decidedBy: string | null;
  decidedAt: Date | null;
  reason: string | null;
  result: Record<string, unknown> | null;
}

interface Row {
  id: string; kind: ProposalKind; marketplace_id: string | null; payload: Record<string, unknown>; proposed_by: string; proposed_at: Date | string;
  status: ProposalStatus; decided_by: string | null; decided_at: Date | string | null; reason: string | null; result: Record<string, unknown> | null;
}

const toProposal = (r: Row): Proposal => ({
  id: r.id, kind: r.kind, marketplaceId: r.marketplace_id, payload: r.payload, proposedBy: r.proposed_by, proposedAt: new Date(r.proposed_at),
  status: r.status, decidedBy: r.decided_by, decidedAt: r.decided_at === null ? null : new Date(r.decided_at), reason: r.reason, result: r.result,
});

export async function getProposal(db: Queryable, id: string, forUpdate = false): Promise<Proposal | undefined> {
  const rows = await db.query<Row>(`select * from proposals where id = $1${forUpdate ? " for update" : ""}`, [id]);
  return rows[0] && toProposal(rows[0]);
}

export async function listProposals(db: Queryable, f: { status?: ProposalStatus; kind?: ProposalKind; marketplaceId?: string; afterId?: string; limit: number }): Promise<Proposal[]> {
  const rows = await db.query<Row>(
    `select * from proposals where ($1::text is null or status = $1) and ($2::text is null or kind = $2) and ($3::text is null or marketplace_id = $3)
        and ($4::uuid is null or id < $4) order by id desc limit $5`,
    [f.status ?? null, f.kind ?? null, f.marketplaceId ?? null, f.afterId ?? null, f.limit]);
  return rows.map(toProposal);
}

function mayPropose(p: Principal, kind: ProposalKind): void {
  if (!PROPOSAL_ROLES[kind].propose.includes(p.role)) {
    throw new LedgerError("forbidden", `a ${p.role} key may not propose a ${kind}; ${PROPOSAL_ROLES[kind].propose.join(" or ")} keys may`);
  }
}

async function insertProposal(db: Queryable, now: Date, p: Principal, kind: ProposalKind, marketplaceId: string | null, payload: Record<string, unknown>): Promise<Proposal> {
  const rows = await db.query<Row>(
    `insert into proposals (id, kind, marketplace_id, payload, proposed_by, proposed_at) values ($1, $2, $3, $4::text::jsonb, $5, $6) returning *`,
    [uuidv7(), kind, marketplaceId, JSON.stringify(payload), p.keyId, now.toISOString()]);
  return toProposal(rows[0]!);
}

/** The same change asked again by the same key while it is open answers the open proposal; else a new one. */
async function openOrInsert(db: Queryable, now: Date, by: Principal, kind: ProposalKind, marketplaceId: string | null, payload: Record<string, unknown>): Promise<Proposal> {
  const open = await db.query<Row>(
    "select * from proposals where kind = $1 and status = 'proposed' and proposed_by = $2 and payload = $3::text::jsonb", [kind, by.keyId, JSON.stringify(payload)]);
  if (open[0]) return toProposal(open[0]);
  return insertProposal(db, now, by, kind, marketplaceId, payload);
}

async function requireAsset(db: Queryable, code: string): Promise<Asset> {
  const asset = await getAssetByCode(db, code);
  if (!asset) throw new LedgerError("asset_not_found", `asset ${code} does not exist`, [{ path: "asset", message: "does not exist" }]);
  return asset;
}

async function requireMarketplace(db: Queryable, id: string): Promise<void> {
  if (!(await getMarketplace(db, id))) throw new LedgerError("marketplace_not_found", `marketplace ${id} does not exist`);
}

export interface ReceiptInput {
  marketplaceId: string;
  /** Money paid for one customer; absent: a settlement by the marketplace of what it owes. */
  customerId?: string;
  asset: string;
  amount: bigint;
  /** Where the money can be found: a bank transfer's reference, an on-chain transaction hash … */
  reference: string;
}

/** Proposes to record money the platform received for a marketplace. Nothing moves until it is approved. */
export async function proposeReceipt(db: Queryable, now: Date, by: Principal, input: ReceiptInput): Promise<Proposal> {
  mayPropose(by, "receipt");
  await requireMarketplace(db, input.marketplaceId);
  const asset = await requireAsset(db, input.asset);
  if (input.customerId !== undefined && !(await getCustomer(db, input.marketplaceId, input.customerId))) {
    throw new LedgerError("customer_not_found", `customer ${input.customerId} of marketplace ${input.marketplaceId} does not exist`, [{ path: "customer_id", message: "does not exist" }]);
  }
  if (!isTransferAmount(input.amount)) throw new LedgerError("invalid_request", "amount must be a positive integer of at most 2^256 - 1", [{ path: "amount", message: "out of range" }]);
  const key = referenceKey(input.reference);
  if (key === "") throw new LedgerError("invalid_request", "reference must hold letters or digits", [{ path: "reference", message: "holds no letters or digits" }]);
  const exists = (what: string) => new LedgerError("receipt_exists",
    `${what} with reference ${JSON.stringify(input.reference)} (compared as ${JSON.stringify(key)}) is already recorded; money is received once`, [{ path: "reference", message: "already used" }]);
  const dup = await db.query<{ id: string }>(
    "select id from proposals where kind = 'receipt' and status <> 'rejected' and payload->>'asset_id' = $1 and payload->>'reference_key' = $2",
    [asset.id, key]);
  if (dup[0]) throw exists(`a receipt of ${asset.code} (proposal ${dup[0].id})`);
  // An on-chain payment the deposit scanner credited to a customer is received already. Under the
  // transaction hash's lock (held until this proposal commits): the scanner, crediting the same
  // hash at the same moment, either finished first and is seen here, or waits and sees this receipt.
  if (TX_HASH.test(key)) {
    await lockReceivedTransactions(db, [key]);
    if ((await db.query("select 1 from chain_deposits where lower(tx_hash) = $1", [key])).length > 0) throw exists("an on-chain deposit credited to a customer");
  }
  try {
    return await insertProposal(db, now, by, "receipt", input.marketplaceId, {
      marketplace_id: input.marketplaceId, customer_id: input.customerId ?? null, asset: asset.code, asset_id: asset.id, amount: input.amount.toString(),
      reference: input.reference, reference_key: key,
    });
  } catch (err) {
    // A concurrent proposal of the same reference: the unique index decides.
    if ((err as { code?: string }).code === "23505") throw exists(`a receipt of ${asset.code}`);
    throw err;
  }
}

const TX_HASH = /^0x[0-9a-f]{64}$/;

/** A reference as compared: letters and digits only, case folded ("WIRE 2026-0042 " and "wire20260042" are one). */
export function referenceKey(reference: string): string {
  return reference.toLowerCase().replace(/[^a-z0-9]/g, "");
}

/** Proposes a marketplace's credit limit in an asset: how much of its unpaid usage the platform advances. */
export async function proposeCreditLimit(db: Queryable, now: Date, by: Principal, input: { marketplaceId: string; asset: string; creditLimit: bigint }): Promise<Proposal> {
  mayPropose(by, "credit_limit");
  await requireMarketplace(db, input.marketplaceId);
  const asset = await requireAsset(db, input.asset);
  if (input.creditLimit < 0n || !isTransferAmount(input.creditLimit + 1n)) throw new LedgerError("invalid_request", "credit_limit must be an integer from 0 to 2^256 - 2", [{ path: "credit_limit", message: "out of range" }]);
  return insertProposal(db, now, by, "credit_limit", input.marketplaceId, {
    marketplace_id: input.marketplaceId, asset: asset.code, asset_id: asset.id, credit_limit: input.creditLimit.toString(),
  });
}

/** What a customer owes in an asset (debits beyond credits, holds included), under its balance row's lock. */
async function customerOwes(tx: Queryable, accountId: string): Promise<{ owes: bigint; limit: bigint }> {
  const [b] = await tx.query<{ owes: string; od: string }>(
    "select greatest(debits_posted + debits_pending - credits_posted, 0)::text as owes, overdraft_limit::text as od from account_balances where account_id = $1 for update", [accountId]);
  return { owes: BigInt(b!.owes), limit: BigInt(b!.od) };
}

/**
 * Proposes a postpaid customer's credit limit in an asset (how much it may owe). A limit below what
 * the customer owes now is refused: finance stops new usage by setting it to what is owed.
 */
export async function proposeCustomerCreditLimit(db: Queryable, now: Date, by: Principal, input: { marketplaceId: string; customerId: string; asset: string; creditLimit: bigint }): Promise<Proposal> {
  mayPropose(by, "customer_credit_limit");
  const customer = await getCustomer(db, input.marketplaceId, input.customerId);
  if (!customer) throw new LedgerError("customer_not_found", `customer ${input.customerId} of marketplace ${input.marketplaceId} does not exist`);
  if (customer.billing !== "postpaid") {
    throw new LedgerError("invalid_request", `customer ${input.customerId} is prepaid: it spends what it deposited and has no credit limit`, [{ path: "id", message: "is prepaid" }]);
  }
  const asset = await requireAsset(db, input.asset);
  if (input.creditLimit < 0n || !isTransferAmount(input.creditLimit + 1n)) {
    throw new LedgerError("invalid_request", "credit_limit must be an integer from 0 to 2^256 - 2", [{ path: "credit_limit", message: "out of range" }]);
  }
  await checkCustomerLimit(db, input.marketplaceId, input.customerId, asset, input.creditLimit);
  const payload = { marketplace_id: input.marketplaceId, customer_id: input.customerId, asset: asset.code, asset_id: asset.id, credit_limit: input.creditLimit.toString() };
  return openOrInsert(db, now, by, "customer_credit_limit", input.marketplaceId, payload);
}

/** Refuses a customer credit limit below what the customer owes; answers the customer's account (opened if need be). */
async function checkCustomerLimit(tx: Queryable, marketplaceId: string, customerId: string, asset: Asset, creditLimit: bigint): Promise<string | undefined> {
  const spec = chart.customer(asset.id, marketplaceId, customerId, false);
  const [row] = await tx.query<{ id: string }>(
    "select id from accounts where asset_id = $1 and marketplace_id = $2 and ref = $3 and opened_by_service", [asset.id, marketplaceId, spec.ref]);
  if (!row) return undefined;
  const { owes } = await customerOwes(tx, row.id);
  if (creditLimit < owes) {
    const message = `customer ${customerId} owes ${owes} ${asset.code} (smallest units) now; its credit limit cannot be set below it (set it to ${owes} to refuse new usage)`;
    throw new LedgerError("invalid_request", message, [{ path: "credit_limit", message }]);
  }
  return row.id;
}

/** Proposes an operator's own payout caps in an asset (on top of the asset's policy; the lower cap applies). */
export async function proposeOperatorPayoutLimits(
  db: Queryable, now: Date, by: Principal, input: { operatorId: string; asset: string; maxPerPayout: bigint | null; maxPerDay: bigint | null },
): Promise<Proposal> {
  mayPropose(by, "operator_payout_limits");
  if ((await db.query("select 1 from operators where id = $1", [input.operatorId])).length === 0) {
    throw new LedgerError("operator_not_found", `operator ${input.operatorId} does not exist`);
  }
  const asset = await requireAsset(db, input.asset);
  for (const [field, cap] of [["max_per_payout", input.maxPerPayout], ["max_per_day", input.maxPerDay]] as const) {
    if (cap !== null && !isTransferAmount(cap)) throw new LedgerError("invalid_request", `${field} must be a positive integer of at most 2^256 - 1`, [{ path: field, message: "out of range" }]);
  }
  const payload = {
    operator_id: input.operatorId, asset: asset.code, asset_id: asset.id,
    max_per_payout: input.maxPerPayout?.toString() ?? null, max_per_day: input.maxPerDay?.toString() ?? null,
  };
  return openOrInsert(db, now, by, "operator_payout_limits", null, payload);
}

/** Proposes an asset's payout policy (its caps and approval threshold decide how much leaves on one key's word). */
export async function proposePayoutPolicy(db: Queryable, now: Date, by: Principal, input: PayoutPolicyInput): Promise<Proposal> {
  mayPropose(by, "payout_policy");
  const asset = await checkPayoutPolicy(db, input);
  const opt = (v: bigint | null | undefined) => (v == null ? null : v.toString());
  const payload = {
    asset: asset.code, asset_id: asset.id, min_amount: input.minAmount.toString(), schedule: input.schedule, interval_seconds: input.intervalSeconds ?? null,
    max_gas_share_bps: input.maxGasShareBps ?? null, max_per_payout: opt(input.maxPerPayout), max_per_day: opt(input.maxPerDay), approval_threshold: opt(input.approvalThreshold),
  };
  return openOrInsert(db, now, by, "payout_policy", null, payload);
}

export interface AdjustmentInput {
  runId: string;
  itemId: bigint;
  note: string;
  adjustment: { debitAccountId: string; creditAccountId: string; amount: bigint };
}

/**
 * Proposes to resolve a reconciliation item with an adjusting transfer. The adjustment is checked
 * now (the item's kind has a discrepancy, the accounts are the ones it concerns, at most its
 * amount) and again when it is approved; the item stays open until then. One open proposal per item.
 */
export async function proposeAdjustment(db: Queryable, now: Date, by: Principal, input: AdjustmentInput): Promise<Proposal> {
  mayPropose(by, "reconciliation_adjustment");
  const [item] = await db.query<{ resolved_at: Date | null }>("select resolved_at from reconciliation_items where id = $1 and reconciliation_id = $2", [input.itemId.toString(), input.runId]);
  if (!item) throw new LedgerError("reconciliation_item_not_found", `item ${input.itemId} of reconciliation ${input.runId} does not exist`);
  if (item.resolved_at !== null) throw new LedgerError("item_already_resolved", `item ${input.itemId} was resolved already`);
  await checkAdjustment(db, input.runId, input.itemId, input.adjustment);
  await db.query("select pg_advisory_xact_lock(hashtextextended($1, 0))", [`adjustment:${input.itemId}`]);
  const open = await db.query<{ id: string }>(
    "select id from proposals where kind = 'reconciliation_adjustment' and status = 'proposed' and payload->>'item_id' = $1", [input.itemId.toString()]);
  if (open[0]) throw new LedgerError("item_already_resolved", `item ${input.itemId} has an adjustment waiting for approval already (proposal ${open[0].id})`);
  return insertProposal(db, now, by, "reconciliation_adjustment", null, {
    reconciliation_id: input.runId, item_id: input.itemId.toString(), note: input.note,
    adjustment: { debit_account_id: input.adjustment.debitAccountId, credit_account_id: input.adjustment.creditAccountId, amount: input.adjustment.amount.toString() },
  });
}

export interface UsageLimitsChange {
  marketplaceId: string;
  asset: string;
  maxGrossPerRecord?: bigint | null;
  maxQuantityPerSecond?: Record<string, string | null>;
}

/**
 * Proposes a change of a marketplace's usage limits in an asset. Checked now; applied when another
 * key approves it. Asking for the same change again while it is open answers the open proposal.
 */
export async function proposeUsageLimits(db: Queryable, now: Date, by: Principal, input: UsageLimitsChange): Promise<Proposal> {
  mayPropose(by, "usage_limits");
  await requireMarketplace(db, input.marketplaceId);
  const asset = await requireAsset(db, input.asset);
  if (input.maxGrossPerRecord != null && input.maxGrossPerRecord > MAX_GROSS_PER_RECORD_CEILING) {
    const message = `max_gross_per_record may be at most ${MAX_GROSS_PER_RECORD_CEILING} (2^128 - 1) smallest units, so that no account's running total can overflow`;
    throw new LedgerError("invalid_request", message, [{ path: "maxGrossPerRecord", message }]);
  }
  for (const [unit, rate] of Object.entries(input.maxQuantityPerSecond ?? {})) {
    if (rate !== null && !parseRate(rate)) {
      throw new LedgerError("invalid_request", `the rate for ${unit} must be a positive decimal`, [{ path: `maxQuantityPerSecond.${unit}`, message: "must be a positive decimal" }]);
    }
  }
  const payload = {
    marketplace_id: input.marketplaceId, asset: asset.code, asset_id: asset.id,
    ...(input.maxGrossPerRecord === undefined ? {} : { max_gross_per_record: input.maxGrossPerRecord?.toString() ?? null }),
    ...(input.maxQuantityPerSecond === undefined ? {} : { max_quantity_per_second: input.maxQuantityPerSecond }),
  };
  return openOrInsert(db, now, by, "usage_limits", input.marketplaceId, payload);
}

/** The approval a payout above its policy's threshold waits for; written with the payout. */
export async function proposePayoutApproval(
  tx: Queryable, now: Date, requestedBy: string, input: { payoutId: string; operatorId: string; asset: string; amount: bigint },
): Promise<Proposal> {
  const rows = await tx.query<Row>(
    `insert into proposals (id, kind, marketplace_id, payload, proposed_by, proposed_at) values ($1, 'payout', null, $2::text::jsonb, $3, $4) returning *`,
    [uuidv7(), JSON.stringify({ payout_id: input.payoutId, operator_id: input.operatorId, asset: input.asset, amount: input.amount.toString() }), requestedBy, now.toISOString()]);
  return toProposal(rows[0]!);
}

/** Checks that `by` may decide the proposal: another key than the proposer's, of a role allowed to approve its kind, and still open. */
function mayDecide(p: Proposal, by: Principal): void {
  if (p.status !== "proposed") throw new LedgerError("proposal_decided", `proposal ${p.id} was already ${p.status} by ${p.decidedBy}`);
  if (!PROPOSAL_ROLES[p.kind].approve.includes(by.role)) {
    throw new LedgerError("forbidden", `a ${by.role} key may not decide a ${p.kind} proposal; ${PROPOSAL_ROLES[p.kind].approve.join(" or ")} keys may`);
  }
  if (p.proposedBy === by.keyId) throw new LedgerError("four_eyes", `proposal ${p.id} must be decided by another key than the one that proposed it`);
}

export const BOOTSTRAP_KEY = "bootstrap-admin";

/** The keys that created `keyId`, nearest first, up to the bootstrap key (or a key of unknown origin). */
async function creators(db: Queryable, keyId: string): Promise<string[]> {
  const rows = await db.query<{ created_by: string }>(
    `with recursive up(id, created_by, depth) as (
       select id::text, created_by, 1 from api_keys where id::text = $1
       union all
       select k.id::text, k.created_by, up.depth + 1 from api_keys k join up on k.id::text = up.created_by where up.depth < 64)
     select created_by from up where created_by is not null order by depth`, [keyId]);
  return rows.map((r) => r.created_by);
}

/**
 * Four eyes means two people, and one person can hold several keys: whoever can create keys (an
 * admin) could create a second one to approve their own proposal. So the two keys must be
 * independent: neither created the other (directly or through keys it created), and they have no
 * creator in common other than the bootstrap key (which creates the people's first keys). The
 * bootstrap key itself takes part in no decision: every key descends from it. Proposals of the
 * scheduler (payouts above a threshold) have no key behind them.
 */
async function independent(db: Queryable, p: Proposal, by: Principal): Promise<void> {
  if (p.proposedBy === "scheduler") return;
  if (by.keyId === BOOTSTRAP_KEY || p.proposedBy === BOOTSTRAP_KEY) {
    throw new LedgerError("four_eyes", `the bootstrap admin key takes part in no four-eyes decision: every key was created through it; propose and approve with the keys of two people`);
  }
  const [mine, theirs] = await Promise.all([creators(db, by.keyId), creators(db, p.proposedBy)]);
  const shared = mine.filter((k) => k !== BOOTSTRAP_KEY && (theirs.includes(k) || k === p.proposedBy));
  if (shared.length > 0 || theirs.includes(by.keyId)) {
    throw new LedgerError("four_eyes", `proposal ${p.id} must be decided by a key independent of the one that proposed it: one of the two keys was created by the other, or both by the same key`);
  }
}

async function decide(tx: Queryable, id: string, status: "approved" | "rejected", by: Principal, at: Date, reason: string | null, result: Record<string, unknown> | null): Promise<Proposal> {
  const rows = await tx.query<Row>(
    `update proposals set status = $2, decided_by = $3, decided_at = $4, reason = $5, result = $6::text::jsonb where id = $1 and status = 'proposed' returning *`,
    [id, status, by.keyId, at.toISOString(), reason, result === null ? null : JSON.stringify(result)]);
  if (!rows[0]) throw new LedgerError("proposal_decided", `proposal ${id} was decided by someone else meanwhile`);
  return toProposal(rows[0]);
}

export async function rejectProposal(db: Database, id: string, by: Principal, reason: string): Promise<Proposal> {
  const p = await getProposal(db, id);
  if (!p) throw new LedgerError("proposal_not_found", `proposal ${id} does not exist`);
  mayDecide(p, by); // rejecting moves no money: another key than the proposer's is enough
  if (p.kind === "payout") {
    // A payout refused is ended: its hold is voided and the amount is the operator's again.
    let decided: Proposal | undefined;
    await failPayouts(db, [String(p.payload.payout_id)], `rejected by a second key: ${reason}`, ["pending"], async (tx) => {
      mayDecide((await getProposal(tx, id, true))!, by);
      decided = await decide(tx, id, "rejected", by, db.clock.now(), reason, null);
    });
    if (decided) return decided;
  }
  return db.transaction(async (tx) => {
    mayDecide((await getProposal(tx, id, true))!, by);
    return decide(tx, id, "rejected", by, db.clock.now(), reason, null);
  });
}

/** Approves a proposal and carries it out, in one transaction: if carrying it out is refused, it stays proposed. */
export async function approveProposal(db: Database, id: string, by: Principal, reason: string | null): Promise<Proposal> {
  const p = await getProposal(db, id);
  if (!p) throw new LedgerError("proposal_not_found", `proposal ${id} does not exist`);
  mayDecide(p, by);
  await independent(db, p, by);
  switch (p.kind) {
    case "receipt":
      return approveReceipt(db, p, by, reason);
    case "reconciliation_adjustment": {
      const a = p.payload.adjustment as { debit_account_id: string; credit_account_id: string; amount: string };
      let decided: Proposal | undefined;
      await resolveItem(db, String(p.payload.reconciliation_id), BigInt(String(p.payload.item_id)), {
        note: String(p.payload.note), resolvedBy: p.proposedBy, approvedBy: by.keyId,
        adjustment: { debitAccountId: a.debit_account_id, creditAccountId: a.credit_account_id, amount: BigInt(a.amount) },
        alsoInTx: async (tx, bookedAt, transferId) => {
          mayDecide((await getProposal(tx, id, true))!, by);
          decided = await decide(tx, id, "approved", by, bookedAt, reason, { transfer_id: transferId });
        },
      });
      return decided!;
    }
    case "usage_limits":
      return inTransaction(db, async (tx) => {
        const locked = (await getProposal(tx, id, true))!;
        mayDecide(locked, by);
        const at = db.clock.now();
        const q = p.payload;
        const limits = await setUsageLimits(tx, at, {
          marketplaceId: p.marketplaceId!, asset: String(q.asset), updatedBy: p.proposedBy,
          maxGrossPerRecord: q.max_gross_per_record === undefined ? undefined : q.max_gross_per_record === null ? null : BigInt(String(q.max_gross_per_record)),
          maxQuantityPerSecond: q.max_quantity_per_second as Record<string, string | null> | undefined,
        });
        return decide(tx, id, "approved", by, at, reason, { max_gross_per_record: limits.maxGrossPerRecord.toString(), max_quantity_per_second: limits.maxQuantityPerSecond });
      });
    case "payout":
      return inTransaction(db, async (tx) => {
        mayDecide((await getProposal(tx, id, true))!, by);
        const at = db.clock.now();
        const payoutId = String(p.payload.payout_id);
        const updated = await tx.query("update payouts set approval = 'approved', note = null, updated_at = $2 where id = $1 and status = 'pending' and approval = 'required' returning id", [payoutId, at.toISOString()]);
        if (updated.length === 0) throw new LedgerError("payout_not_pending", `payout ${payoutId} is no longer waiting for approval (cancelled or failed)`);
        await recordPayoutEvents(tx, [payoutId], "pending", at, { approved_by: by.keyId });
        return decide(tx, id, "approved", by, at, reason, { payout_id: payoutId });
      });
    case "operator_payout_limits":
      return inTransaction(db, async (tx) => {
        mayDecide((await getProposal(tx, id, true))!, by);
        const at = db.clock.now();
        const q = p.payload;
        await tx.query(
          `insert into operator_payout_limits (operator_id, asset_id, max_per_payout, max_per_day, proposal_id, updated_at) values ($1, $2, $3, $4, $5, $6)
           on conflict (operator_id, asset_id) do update set max_per_payout = excluded.max_per_payout, max_per_day = excluded.max_per_day,
             proposal_id = excluded.proposal_id, updated_at = excluded.updated_at`,
          [q.operator_id, q.asset_id, q.max_per_payout, q.max_per_day, p.id, at.toISOString()]);
        return decide(tx, id, "approved", by, at, reason, { max_per_payout: q.max_per_payout ?? null, max_per_day: q.max_per_day ?? null });
      });
    case "payout_policy":
      return inTransaction(db, async (tx) => {
        mayDecide((await getProposal(tx, id, true))!, by);
        const at = db.clock.now();
        const q = p.payload as Record<string, string | number | null>;
        const big = (v: string | number | null | undefined) => (v == null ? null : BigInt(v));
        const policy = await setPayoutPolicy(tx, {
          asset: String(q.asset), minAmount: BigInt(String(q.min_amount)), schedule: q.schedule as "manual" | "interval",
          intervalSeconds: q.interval_seconds === null ? undefined : Number(q.interval_seconds), maxGasShareBps: q.max_gas_share_bps === null ? null : Number(q.max_gas_share_bps),
          maxPerPayout: big(q.max_per_payout), maxPerDay: big(q.max_per_day), approvalThreshold: big(q.approval_threshold),
          updatedBy: p.proposedBy, now: at,
        });
        return decide(tx, id, "approved", by, at, reason, { asset: policy.assetCode, updated_at: at.toISOString() });
      });
    case "customer_credit_limit":
      return inTransaction(db, async (tx) => {
        mayDecide((await getProposal(tx, id, true))!, by);
        const at = db.clock.now();
        const asset = (await getAsset(tx, String(p.payload.asset_id)))!;
        const customerId = String(p.payload.customer_id);
        const limit = BigInt(String(p.payload.credit_limit));
        // Under the balance row's lock: usage written meanwhile is counted, and usage after it sees the new limit.
        let accountId = await checkCustomerLimit(tx, p.marketplaceId!, customerId, asset, limit);
        if (accountId === undefined) {
          const spec = chart.customer(asset.id, p.marketplaceId!, customerId, false);
          accountId = (await ensureAccounts(tx, [{ ...spec, overdraftLimit: limit }])).get(specKey(spec))!;
          await customerOwes(tx, accountId);
        }
        await tx.query("update account_balances set overdraft_limit = $2 where account_id = $1", [accountId, limit.toString()]);
        return decide(tx, id, "approved", by, at, reason, { credit_limit: limit.toString(), account_id: accountId });
      });
    case "credit_limit":
      return inTransaction(db, async (tx) => {
        const locked = (await getProposal(tx, id, true))!;
        mayDecide(locked, by);
        const at = db.clock.now();
        const limit = String(p.payload.credit_limit);
        // With the marketplace's funding lock held exclusively (no usage written, no payout judged
        // meanwhile): a lower limit may not take back credit that operators were already paid from.
        await tx.query("select pg_advisory_xact_lock(hashtextextended($1, 0))", [`usage-funding:${p.marketplaceId}`]);
        await tx.query(
          `insert into marketplace_credit_limits (marketplace_id, asset_id, credit_limit, proposal_id, updated_at) values ($1, $2, $3, $4, $5)
           on conflict (marketplace_id, asset_id) do update set credit_limit = excluded.credit_limit, proposal_id = excluded.proposal_id, updated_at = excluded.updated_at`,
          [p.marketplaceId, p.payload.asset_id, limit, p.id, at.toISOString()]);
        const paidBeyond = await paidBeyondFunds(tx, { marketplaceId: p.marketplaceId!, assetId: String(p.payload.asset_id) });
        if (paidBeyond.length > 0) {
          const asset = (await getAsset(tx, String(p.payload.asset_id)))!;
          throw new LedgerError("credit_limit_in_use",
            `a credit limit of ${unitsToDecimal(BigInt(limit), asset.scale)} ${asset.code} would take back credit that was paid out: `
            + `${paidBeyond.map((o) => `operator ${o.operatorId} was paid ${unitsToDecimal(o.awaiting - o.available, asset.scale)} ${asset.code} beyond its funded earnings`).join("; ")}; `
            + "lower it once the marketplace has settled that much");
        }
        return decide(tx, id, "approved", by, at, reason, { credit_limit: limit });
      });
  }
}

/**
 * Records the money: treasury → the customer's account (money paid for a customer) or → the
 * marketplace's deposit clearing (its settlement of deposits it claimed), and the receipt row.
 */
async function approveReceipt(db: Database, p: Proposal, by: Principal, reason: string | null): Promise<Proposal> {
  const asset = (await getAsset(db, String(p.payload.asset_id)))!;
  const marketplaceId = p.marketplaceId!;
  const customerId = p.payload.customer_id === null ? null : String(p.payload.customer_id);
  const customer = customerId === null ? undefined : await getCustomer(db, marketplaceId, customerId);
  const route = asset.settlement.kind === "offchain" ? "offchain" : String(asset.settlement.chainId);
  const treasury = chart.treasury(asset.id, route);
  const to = customer ? chart.customer(asset.id, marketplaceId, customer.id, customer.billing === "prepaid") : chart.depositClearing(asset.id, marketplaceId);
  const amount = BigInt(String(p.payload.amount));
  let decided: Proposal | undefined;
  const [result] = await writeTransfers(db, async (tx) => {
    const locked = (await getProposal(tx, p.id, true))!;
    mayDecide(locked, by);
    const ids = await ensureAccounts(tx, [treasury, to]);
    return [{
      kind: "standard", idempotencyKey: `receipt:${p.id}`,
      metadata: { receipt: { proposal_id: p.id, marketplace_id: marketplaceId, customer_id: customerId, reference: p.payload.reference } },
      legs: [{ debitAccountId: ids.get(specKey(treasury))!, creditAccountId: ids.get(specKey(to))!, amount }],
    }];
  }, {
    afterWrite: async (tx, [outcome], bookedAt) => {
      if (outcome?.kind === "refused") throw outcome.error;
      if (outcome?.kind !== "created") throw new LedgerError("proposal_decided", `proposal ${p.id} was carried out already`);
      await tx.query(
        `insert into funds_receipts (id, marketplace_id, customer_id, asset_id, amount, reference, reference_key, transfer_id, proposal_id, received_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [uuidv7(), marketplaceId, customerId, asset.id, amount.toString(), String(p.payload.reference), String(p.payload.reference_key), outcome.transfer.id, p.id, bookedAt.toISOString()]);
      decided = await decide(tx, p.id, "approved", by, bookedAt, reason, { transfer_id: outcome.transfer.id });
    },
  });
  if (!result!.ok) throw result!.error;
  return decided!;
}
