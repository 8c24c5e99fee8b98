import type { PayoutStatus } from "../../domain/payouts.js";
import type { Queryable } from "../client.js";
import { pgArray } from "../sql-arrays.js";

export { PAYOUT_SELECT, toPayout, type Payout, type PayoutRow, type PayoutSplit } from "./payout-row.js";
import { PAYOUT_SELECT, toPayout, type Payout, type PayoutRow, type PayoutSplit } from "./payout-row.js";

export async function getPayout(db: Queryable, id: string): Promise<Payout | undefined> {
  const rows = await db.query<PayoutRow>(`${PAYOUT_SELECT} where p.id = $1`, [id]);
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
  /** The key that asked for the payout ("bootstrap-admin", or "scheduler" for the schedule's). */
  requestedBy?: string;
}

/** Payouts in creation order (ids are time-ordered), filtered. */
export async function listPayouts(db: Queryable, f: PayoutFilter): Promise<Payout[]> {
  const rows = await db.query<PayoutRow>(
    `${PAYOUT_SELECT}
      where ($1::text is null or p.operator_id = $1) and ($2::uuid is null or p.asset_id = $2) and ($3::text is null or p.status = $3)
        and ($4::bigint is null or p.chain_id = $4) and ($5::timestamptz is null or p.created_at >= $5)
        and ($6::timestamptz is null or p.created_at < $6) and ($7::uuid is null or p.id > $7)
        and ($9::text is null or p.requested_by = $9)
      order by p.id limit $8`,
    [
      f.operatorId ?? null,
      f.assetId ?? null,
      f.status ?? null,
      f.chainId?.toString() ?? null,
      f.from?.toISOString() ?? null,
      f.to?.toISOString() ?? null,
      f.after ?? null,
      f.limit,
      f.requestedBy ?? null,
    ],
  );
  return rows.map(toPayout);
}

/** The id of the payout whose hold is the given ledger transfer (there must be one). */
export async function getPayoutIdByHold(db: Queryable, holdTransferId: string): Promise<string> {
  const rows = await db.query<{ id: string }>("select id from payouts where hold_transfer_id = $1", [holdTransferId]);
  return rows[0]!.id;
}

export async function payoutExists(db: Queryable, id: string): Promise<boolean> {
  return (await db.query("select 1 from payouts where id = $1", [id])).length > 0;
}

/** The operator's payout address on a chain (only verified addresses are stored), if any. */
export async function getPayoutAddress(db: Queryable, operatorId: string, chainId: bigint): Promise<string | undefined> {
  const rows = await db.query<{ address: string }>("select address from payout_addresses where operator_id = $1 and chain_id = $2", [
    operatorId,
    chainId.toString(),
  ]);
  return rows[0]?.address;
}

/** Whether the account was opened with the no-overdraft limit (debits_must_not_exceed_credits). */
export async function hasNoOverdraftLimit(db: Queryable, accountId: string | undefined): Promise<boolean> {
  const [flags] = await db.query<{ dmnec: boolean }>("select debits_must_not_exceed_credits as dmnec from accounts where id = $1", [accountId]);
  return !!flags?.dmnec;
}

/** An account's available balance: credits posted less debits posted and pending. */
export async function getAvailableBalance(db: Queryable, accountId: string): Promise<bigint> {
  const [b] = await db.query<{ available: string }>(
    "select (credits_posted - debits_posted - debits_pending)::text as available from account_balances where account_id = $1",
    [accountId],
  );
  return BigInt(b!.available);
}

/** Operators whose payable of an asset (opened by the service) has at least `minAmount` available, by operator. */
export async function listOperatorsWithAvailablePayable(
  db: Queryable,
  assetId: string,
  minAmount: bigint,
): Promise<Array<{ operator_id: string; available: string }>> {
  return db.query<{ operator_id: string; available: string }>(
    `select a.owner_id as operator_id, (b.credits_posted - b.debits_posted - b.debits_pending)::text as available
       from accounts a join account_balances b on b.account_id = a.id
      where a.asset_id = $1 and a.opened_by_service and a.marketplace_id is null and a.code = 'operator_payable'
        and b.credits_posted - b.debits_posted - b.debits_pending >= $2
      order by a.owner_id`,
    [assetId, minAmount.toString()],
  );
}

export interface NewPayout {
  id: string;
  operatorId: string;
  assetId: string;
  settlement: "evm" | "none" | "convert";
  chainId: bigint | null;
  toAddress: string | null;
  amount: bigint;
  trigger: "request" | "schedule";
  requestedBy: string;
  holdTransferId: string;
  createdAt: Date;
  approval: "required" | null;
  splits?: PayoutSplit[];
  parentPayoutId?: string;
}

/** Inserts a pending payout. */
export async function insertPayout(tx: Queryable, p: NewPayout): Promise<void> {
  await tx.query(
    `insert into payouts (id, operator_id, asset_id, settlement, chain_id, to_address, amount, status, trigger, requested_by, hold_transfer_id, created_at, updated_at, approval, splits, parent_payout_id)
     values ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, $9, $10, $11, $11, $12, $13::text::jsonb, $14)`,
    [
      p.id,
      p.operatorId,
      p.assetId,
      p.settlement,
      p.chainId?.toString() ?? null,
      p.toAddress,
      p.amount.toString(),
      p.trigger,
      p.requestedBy,
      p.holdTransferId,
      p.createdAt.toISOString(),
      p.approval,
      p.splits === undefined ? null : JSON.stringify(p.splits),
      p.parentPayoutId ?? null,
    ],
  );
}

export async function setPayoutNote(tx: Queryable, id: string, note: string): Promise<void> {
  await tx.query("update payouts set note = $2 where id = $1", [id, note]);
}

/** Serializes payout requests of one operator and asset for a day's cap, until the transaction ends. */
export async function lockOperatorPayoutDay(tx: Queryable, operatorId: string, assetId: string): Promise<void> {
  await tx.query("select pg_advisory_xact_lock(hashtextextended($1, 0))", [`payout-day:${operatorId}:${assetId}`]);
}

/**
 * The sum of an operator's payouts of an asset created in [start, end) that did not fail, leaving
 * out one payout. A convert payout counts in its earnings asset as asked for, converted or not; its
 * part paid in that same asset is the same money and is not counted again (its parts in other
 * assets count in theirs).
 */
export async function sumPayoutsNotFailed(tx: Queryable, operatorId: string, assetId: string, start: Date, end: Date, exceptPayoutId: string): Promise<bigint> {
  const [row] = await tx.query<{ sum: string }>(
    `select coalesce(sum(p.amount), 0)::text as sum from payouts p
      where p.operator_id = $1 and p.asset_id = $2 and p.status <> 'failed' and p.created_at >= $3 and p.created_at < $4 and p.id <> $5
        and not exists (select 1 from payouts parent where parent.id = p.parent_payout_id and parent.asset_id = p.asset_id)`,
    [operatorId, assetId, start.toISOString(), end.toISOString(), exceptPayoutId],
  );
  return BigInt(row!.sum);
}

/** Locks the payouts among `ids` that are in one of `statuses`, in id order; returns their ids. */
export async function lockPayoutsIn(tx: Queryable, ids: string[], statuses: string[]): Promise<string[]> {
  const rows = await tx.query<{ id: string }>("select id from payouts where id = any($1::uuid[]) and status = any($2::text[]) order by id for update", [
    pgArray(ids),
    pgArray(statuses),
  ]);
  return rows.map((r) => r.id);
}

/** Locks the payouts among `ids` that are in one of `statuses`, in id order; returns each with its hold. */
export async function lockPayoutHoldsIn(tx: Queryable, ids: string[], statuses: string[]): Promise<Array<{ id: string; hold_transfer_id: string }>> {
  return tx.query<{ id: string; hold_transfer_id: string }>(
    "select id, hold_transfer_id from payouts where id = any($1::uuid[]) and status = any($2::text[]) order by id for update",
    [pgArray(ids), pgArray(statuses)],
  );
}

/** What each of these holds (pending transfers) holds: the pending amount it credits, by hold id. */
export async function heldAmounts(tx: Queryable, holdTransferIds: string[]): Promise<Map<string, bigint>> {
  if (holdTransferIds.length === 0) return new Map();
  const rows = await tx.query<{ transfer_id: string; held: string }>(
    "select transfer_id, sum(pending_amount)::text as held from entries where transfer_id = any($1::uuid[]) and side = 'credit' group by transfer_id",
    [pgArray(holdTransferIds)],
  );
  return new Map(rows.map((r) => [r.transfer_id, BigInt(r.held)]));
}

export interface PayoutSettlement {
  txHash?: string;
  blockNumber?: bigint;
  logIndex?: number;
  externalReference?: string;
}

/** Marks a payout confirmed with its settle transfer and chain facts (or external reference); facts not given are kept. */
export async function markPayoutConfirmed(tx: Queryable, id: string, settleTransferId: string | null, d: PayoutSettlement, at: Date): Promise<void> {
  await tx.query(
    `update payouts set status = 'confirmed', settle_transfer_id = $2, tx_hash = coalesce($3, tx_hash), block_number = coalesce($4, block_number),
            log_index = coalesce($5, log_index), external_reference = coalesce($6, external_reference), note = null,
            confirmed_at = $7, updated_at = $7
      where id = $1`,
    [id, settleTransferId, d.txHash ?? null, d.blockNumber?.toString() ?? null, d.logIndex ?? null, d.externalReference ?? null, at.toISOString()],
  );
}

export async function markPayoutsFailed(tx: Queryable, ids: string[], reason: string, at: Date): Promise<void> {
  await tx.query("update payouts set status = 'failed', failure_reason = $2, note = null, updated_at = $3 where id = any($1::uuid[])", [
    pgArray(ids),
    reason,
    at.toISOString(),
  ]);
}

/** Appends one event per payout to their history. */
export async function recordPayoutEvents(tx: Queryable, ids: string[], status: PayoutStatus, at: Date, detail: Record<string, unknown> = {}): Promise<void> {
  if (ids.length === 0) return;
  await tx.query("insert into payout_events (payout_id, status, detail, at) select unnest($1::uuid[]), $2, $3::text::jsonb, $4", [
    pgArray(ids),
    status,
    JSON.stringify(detail),
    at.toISOString(),
  ]);
}
