import type { Queryable } from "../client.js";
import { pgArray } from "../sql-arrays.js";
import { PAYOUT_SELECT, toPayout, type Payout, type PayoutRow } from "./payouts.js";

/** The payouts of a chain transaction (a batch) as the vault's batch call takes them. */
export interface BatchItem {
  payoutId: string;
  to: string;
  amount: bigint;
}

export interface PendingPayoutRow {
  id: string;
  operator_id: string;
  asset_id: string;
  amount: string;
  to_address: string;
}

/**
 * Pending EVM payouts of a chain that may be batched (not waiting for approval): at most
 * `perAsset` of each asset, oldest first, in creation order overall.
 */
export async function listPayoutsToBatch(db: Queryable, chainId: bigint, perAsset: number): Promise<PendingPayoutRow[]> {
  return db.query<PendingPayoutRow>(
    `select p.id, p.operator_id, p.asset_id, p.amount::text as amount, p.to_address
       from (select distinct asset_id from payouts where status = 'pending' and settlement = 'evm' and chain_id = $1) a
       cross join lateral (select id, operator_id, asset_id, amount, to_address, created_at from payouts
                            where status = 'pending' and settlement = 'evm' and chain_id = $1 and asset_id = a.asset_id
                              and approval is distinct from 'required'
                            order by created_at, id limit $2) p
      order by p.created_at, p.id`,
    [chainId.toString(), perAsset],
  );
}

/** The amount of an asset in payouts batched, signed or submitted on a chain, leaving out one chain transaction's. */
export async function sumPayoutsInFlight(db: Queryable, chainId: bigint, assetId: string, exceptChainTx: string | undefined): Promise<bigint> {
  const [flight] = await db.query<{ amount: string }>(
    `select coalesce(sum(amount), 0)::text as amount from payouts
      where settlement = 'evm' and chain_id = $1 and asset_id = $2 and status in ('batched', 'signed', 'submitted')
        and ($3::uuid is null or chain_tx_id is distinct from $3)`,
    [chainId.toString(), assetId, exceptChainTx ?? null],
  );
  return BigInt(flight!.amount);
}

/** Sets the note of those payouts among `ids` still pending whose note differs. */
export async function notePendingPayouts(db: Queryable, ids: string[], note: string): Promise<void> {
  await db.query("update payouts set note = $2 where id = any($1::uuid[]) and status = 'pending' and note is distinct from $2", [pgArray(ids), note]);
}

/** Locks those payouts among `ids` still pending and not waiting for approval, skipping rows another worker holds; returns their ids. */
export async function lockPayoutsToBatch(tx: Queryable, ids: string[]): Promise<string[]> {
  const locked = await tx.query<{ id: string }>(
    "select id from payouts where id = any($1::uuid[]) and status = 'pending' and approval is distinct from 'required' order by id for update skip locked",
    [pgArray(ids)],
  );
  return locked.map((r) => r.id);
}

export async function markPayoutsBatched(tx: Queryable, ids: string[], chainTxId: string): Promise<void> {
  await tx.query("update payouts set status = 'batched', chain_tx_id = $2, note = null, updated_at = now() where id = any($1::uuid[])", [
    pgArray(ids),
    chainTxId,
  ]);
}

/** The payouts of a chain transaction in one of `statuses`, in id order. */
export async function listBatchItems(tx: Queryable, chainTxId: string, statuses: string[]): Promise<BatchItem[]> {
  const rows = await tx.query<{ id: string; to_address: string; amount: string }>(
    "select id, to_address, amount::text as amount from payouts where chain_tx_id = $1 and status = any($2::text[]) order by id",
    [chainTxId, pgArray(statuses)],
  );
  return rows.map((r) => ({ payoutId: r.id, to: r.to_address, amount: BigInt(r.amount) }));
}

export async function markPayoutsSigned(tx: Queryable, chainTxId: string): Promise<void> {
  await tx.query("update payouts set status = 'signed', updated_at = now() where chain_tx_id = $1 and status = 'batched'", [chainTxId]);
}

/** Moves a chain transaction's signed payouts to submitted; returns their ids. */
export async function markPayoutsSubmitted(tx: Queryable, chainTxId: string): Promise<string[]> {
  const ids = await tx.query<{ id: string }>(
    "update payouts set status = 'submitted', updated_at = now() where chain_tx_id = $1 and status = 'signed' returning id",
    [chainTxId],
  );
  return ids.map((r) => r.id);
}

/** The ids of every payout a chain transaction carries, whatever their status. */
export async function listPayoutIdsOfChainTx(db: Queryable, chainTxId: string): Promise<string[]> {
  return (await db.query<{ id: string }>("select id from payouts where chain_tx_id = $1", [chainTxId])).map((r) => r.id);
}

/** The ids of a chain transaction's payouts in one of `statuses`. */
export async function listPayoutIdsOfChainTxIn(tx: Queryable, chainTxId: string, statuses: string[]): Promise<string[]> {
  const ids = await tx.query<{ id: string }>("select id from payouts where chain_tx_id = $1 and status = any($2::text[])", [chainTxId, pgArray(statuses)]);
  return ids.map((r) => r.id);
}

/** A chain transaction's payouts still signed or submitted, in id order. */
export async function listPayoutsInFlightOfChainTx(db: Queryable, chainTxId: string): Promise<Payout[]> {
  const rows = await db.query<PayoutRow>(`${PAYOUT_SELECT} where p.chain_tx_id = $1 and p.status in ('signed', 'submitted') order by p.id`, [chainTxId]);
  return rows.map(toPayout);
}

export interface UnpaidCandidateRow {
  id: string;
  unpaid_attempts: number;
  amount: string;
}

/** A chain transaction's payouts still signed or submitted, with the times they rode a transaction that did not pay. */
export async function listUnpaidCandidates(db: Queryable, chainTxId: string): Promise<UnpaidCandidateRow[]> {
  return db.query<UnpaidCandidateRow>(
    "select id, unpaid_attempts, amount::text as amount from payouts where chain_tx_id = $1 and status in ('signed', 'submitted')",
    [chainTxId],
  );
}

/** Locks those payouts among `ids` still signed or submitted, in id order; returns each with its hold. */
export async function lockInFlightPayoutHolds(tx: Queryable, ids: string[]): Promise<Array<{ id: string; hold_transfer_id: string }>> {
  return tx.query<{ id: string; hold_transfer_id: string }>(
    "select id, hold_transfer_id from payouts where id = any($1::uuid[]) and status in ('signed', 'submitted') order by id for update",
    [pgArray(ids)],
  );
}

/** Fails those payouts among `ids` still signed or submitted, counting the unpaid attempt. */
export async function markInFlightPayoutsFailed(tx: Queryable, ids: string[], reason: string): Promise<void> {
  await tx.query(
    "update payouts set status = 'failed', failure_reason = $2, unpaid_attempts = unpaid_attempts + 1, updated_at = now() where id = any($1::uuid[]) and status in ('signed', 'submitted')",
    [pgArray(ids), reason],
  );
}

/** Sends a chain transaction's payouts in one of `from` back to pending, off the transaction; returns their ids. */
export async function requeuePayouts(tx: Queryable, chainTxId: string, from: string[], countAttempt: boolean): Promise<string[]> {
  const ids = await tx.query<{ id: string }>(
    `update payouts set status = 'pending', chain_tx_id = null, unpaid_attempts = unpaid_attempts + $3, updated_at = now()
      where chain_tx_id = $1 and status = any($2::text[]) returning id`,
    [chainTxId, pgArray(from), countAttempt ? 1 : 0],
  );
  return ids.map((r) => r.id);
}
