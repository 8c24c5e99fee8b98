import type { Asset } from "../../domain/assets.js";
import type { Queryable } from "../client.js";
import { ASSET_COLUMNS, toAsset, type AssetRow } from "./assets.js";

type Hex = `0x${string}`;

/** A chain transaction (a batch of payouts) as the payout worker's steps read it; the columns each step needs. */
export type ChainTxRow = {
  id: string;
  asset_id: string;
  nonce: string | null;
  to_address: string | null;
  data: string | null;
  value: string | null;
  gas_limit: string | null;
  signed_block?: string | null;
};

/** The latest signed attempt of a chain transaction; `accepted` once a node took it. */
export type AttemptRow = {
  hash: Hex;
  raw: Hex;
  attempt: number;
  max_fee_per_gas: string;
  max_priority_fee_per_gas: string;
  waited_ms: string;
  accepted: boolean;
};

export interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/** The chain's native asset (by identity, not by code), if it was created. */
export async function findNativeAsset(db: Queryable, chainId: bigint): Promise<Asset | undefined> {
  const [row] = await db.query<AssetRow & Record<string, unknown>>(`select ${ASSET_COLUMNS} from assets where settlement = 'native' and chain_id = $1`, [
    chainId.toString(),
  ]);
  return row ? toAsset(row) : undefined;
}

/** Creates a chain transaction in status batched. */
export async function insertBatchedChainTx(tx: Queryable, id: string, chainId: bigint, assetId: string, sender: string): Promise<void> {
  await tx.query("insert into chain_transactions (id, chain_id, asset_id, sender, status) values ($1, $2, $3, $4, 'batched')", [
    id,
    chainId.toString(),
    assetId,
    sender,
  ]);
}

/** A signer's batched chain transactions on a chain, oldest first. */
export async function listBatchedChainTxs(db: Queryable, chainId: bigint, sender: string): Promise<ChainTxRow[]> {
  return db.query<ChainTxRow>(
    "select id, asset_id from chain_transactions where chain_id = $1 and sender = $2 and status = 'batched' order by created_at, id",
    [chainId.toString(), sender],
  );
}

/** A signer's signed chain transactions on a chain, in nonce order. */
export async function listSignedChainTxs(db: Queryable, chainId: bigint, sender: string): Promise<ChainTxRow[]> {
  return db.query<ChainTxRow>(
    `select id, asset_id, nonce::text as nonce, to_address, data, value::text as value, gas_limit::text as gas_limit
       from chain_transactions where chain_id = $1 and sender = $2 and status = 'signed' order by nonce`,
    [chainId.toString(), sender],
  );
}

/** A signer's submitted chain transactions on a chain, in nonce order. */
export async function listSubmittedChainTxs(db: Queryable, chainId: bigint, sender: string): Promise<ChainTxRow[]> {
  return db.query<ChainTxRow>(
    `select id, asset_id, nonce::text as nonce, to_address, data, value::text as value, gas_limit::text as gas_limit, signed_block::text as signed_block
       from chain_transactions where chain_id = $1 and sender = $2 and status = 'submitted' order by nonce`,
    [chainId.toString(), sender],
  );
}

/** Locks a chain transaction's row and returns its status (undefined when there is none). */
export async function lockChainTxStatus(tx: Queryable, id: string): Promise<string | undefined> {
  const state = await tx.query<{ status: string }>("select status from chain_transactions where id = $1 for update", [id]);
  return state[0]?.status;
}

/** Notes the last trouble with a chain transaction, whatever its status. */
export async function recordChainTxError(db: Queryable, id: string, error: string): Promise<void> {
  await db.query("update chain_transactions set last_error = $2, updated_at = now() where id = $1", [id, error]);
}

/** Ends a batched chain transaction that has no payouts left. */
export async function failEmptyBatch(db: Queryable, id: string): Promise<void> {
  await db.query(
    "update chain_transactions set status = 'failed', failure_reason = 'no payouts left', updated_at = now() where id = $1 and status = 'batched'",
    [id],
  );
}

/** Ends a chain transaction still batched (never signed) with a reason. */
export async function failBatch(tx: Queryable, id: string, reason: string): Promise<void> {
  await tx.query("update chain_transactions set status = 'failed', failure_reason = $2, updated_at = now() where id = $1 and status = 'batched'", [id, reason]);
}

/** Stores the first signed attempt of a chain transaction, before it is broadcast. */
export async function recordSignedTransaction(tx: Queryable, chainTxId: string, hash: Hex, raw: Hex, fees: Fees): Promise<void> {
  await tx.query(`insert into chain_tx_attempts (hash, chain_tx_id, attempt, raw, max_fee_per_gas, max_priority_fee_per_gas) values ($1, $2, 1, $3, $4, $5)`, [
    hash,
    chainTxId,
    raw,
    fees.maxFeePerGas.toString(),
    fees.maxPriorityFeePerGas.toString(),
  ]);
}

/** Stores a replacement attempt (same nonce, higher fees), before it is broadcast. */
export async function recordReplacementAttempt(tx: Queryable, chainTxId: string, attempt: number, hash: Hex, raw: Hex, fees: Fees): Promise<void> {
  await tx.query(`insert into chain_tx_attempts (hash, chain_tx_id, attempt, raw, max_fee_per_gas, max_priority_fee_per_gas) values ($1, $2, $3, $4, $5, $6)`, [
    hash,
    chainTxId,
    attempt,
    raw,
    fees.maxFeePerGas.toString(),
    fees.maxPriorityFeePerGas.toString(),
  ]);
}

/** Marks a chain transaction signed with its nonce, call and gas limit, and the head block it was signed at. */
export async function markChainTxSigned(
  tx: Queryable,
  id: string,
  nonce: bigint,
  call: { to: string; data: string; value: bigint },
  gas: bigint,
  signedBlock: bigint,
): Promise<void> {
  await tx.query(
    `update chain_transactions set status = 'signed', nonce = $2, to_address = $3, data = $4, value = $5, gas_limit = $6, signed_block = $7,
            last_error = null, updated_at = now()
      where id = $1`,
    [id, nonce.toString(), call.to, call.data, call.value.toString(), gas.toString(), signedBlock.toString()],
  );
}

/** Moves a chain transaction from signed to submitted; false when it was not signed (any more). */
export async function markChainTxSubmitted(tx: Queryable, id: string): Promise<boolean> {
  const moved = await tx.query<{ id: string }>(
    "update chain_transactions set status = 'submitted', last_error = null, updated_at = now() where id = $1 and status = 'signed' returning id",
    [id],
  );
  return moved.length > 0;
}

export interface MinedFacts {
  transactionHash: string;
  blockNumber: bigint;
  blockHash: string;
  gasUsed: bigint;
}

/** Marks a signed or submitted chain transaction confirmed with its receipt's facts and fee. */
export async function markChainTxConfirmed(tx: Queryable, id: string, receipt: MinedFacts, fee: bigint): Promise<void> {
  await tx.query(
    `update chain_transactions set status = 'confirmed', tx_hash = $2, block_number = $3, block_hash = $4, gas_used = $5, fee = $6, last_error = null, updated_at = now()
      where id = $1 and status in ('signed', 'submitted')`,
    [id, receipt.transactionHash, receipt.blockNumber.toString(), receipt.blockHash, receipt.gasUsed.toString(), fee.toString()],
  );
}

/** Marks a chain transaction failed with a reason, and the receipt's facts and fee when it was mined. */
export async function markChainTxFailed(tx: Queryable, id: string, reason: string, mined: { receipt: MinedFacts; fee: bigint } | null): Promise<void> {
  await tx.query(
    `update chain_transactions set status = 'failed', failure_reason = $2, tx_hash = $3, block_number = $4, block_hash = $5, gas_used = $6, fee = $7, updated_at = now()
      where id = $1`,
    [
      id,
      reason,
      mined?.receipt.transactionHash ?? null,
      mined?.receipt.blockNumber.toString() ?? null,
      mined?.receipt.blockHash ?? null,
      mined?.receipt.gasUsed.toString() ?? null,
      mined?.fee.toString() ?? null,
    ],
  );
}

/** The latest attempt of a chain transaction, with how long it has waited since it was broadcast (or signed). */
export async function getLatestAttempt(db: Queryable, chainTxId: string): Promise<AttemptRow> {
  const rows = await db.query<AttemptRow>(
    `select hash, raw, attempt, max_fee_per_gas::text as max_fee_per_gas, max_priority_fee_per_gas::text as max_priority_fee_per_gas,
            (extract(epoch from clock_timestamp() - coalesce(broadcast_at, created_at)) * 1000)::bigint::text as waited_ms,
            broadcast_at is not null as accepted
       from chain_tx_attempts where chain_tx_id = $1 order by attempt desc limit 1`,
    [chainTxId],
  );
  return rows[0]!;
}

/** The hashes of every attempt of a chain transaction, first first. */
export async function listAttemptHashes(db: Queryable, chainTxId: string): Promise<Hex[]> {
  return (await db.query<{ hash: Hex }>("select hash from chain_tx_attempts where chain_tx_id = $1 order by attempt", [chainTxId])).map((a) => a.hash);
}

/** Notes that a node accepted an attempt, keeping the first such instant. */
export async function recordFirstBroadcast(tx: Queryable, hash: string): Promise<void> {
  await tx.query("update chain_tx_attempts set broadcast_at = coalesce(broadcast_at, now()) where hash = $1", [hash]);
}

/** Notes that a node accepted an attempt now. */
export async function recordBroadcast(db: Queryable, hash: string): Promise<void> {
  await db.query("update chain_tx_attempts set broadcast_at = now() where hash = $1", [hash]);
}

/** Whether the database already keeps the nonces of a signer on a chain. */
export async function senderKnown(db: Queryable, chainId: bigint, sender: string): Promise<boolean> {
  const rows = await db.query("select 1 from chain_senders where chain_id = $1 and address = $2", [chainId.toString(), sender]);
  return rows.length > 0;
}

/** Starts keeping a signer's nonces on a chain from `nextNonce` (once: a concurrent insert wins). */
export async function insertSender(db: Queryable, chainId: bigint, sender: string, nextNonce: bigint): Promise<void> {
  await db.query("insert into chain_senders (chain_id, address, next_nonce) values ($1, $2, $3) on conflict do nothing", [
    chainId.toString(),
    sender,
    nextNonce.toString(),
  ]);
}

/** Locks a signer's row on a chain and returns its next nonce (as text; undefined when there is no row). */
export async function lockSenderNextNonce(tx: Queryable, chainId: bigint, sender: string): Promise<string | undefined> {
  const rows = await tx.query<{ next_nonce: string }>(
    "select next_nonce::text as next_nonce from chain_senders where chain_id = $1 and address = $2 for update",
    [chainId.toString(), sender],
  );
  return rows[0]?.next_nonce;
}

export async function advanceSenderNonce(tx: Queryable, chainId: bigint, sender: string): Promise<void> {
  await tx.query("update chain_senders set next_nonce = next_nonce + 1 where chain_id = $1 and address = $2", [chainId.toString(), sender]);
}
