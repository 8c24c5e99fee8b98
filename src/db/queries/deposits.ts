import type { Queryable } from "../client.js";
import { pgArray } from "../sql-arrays.js";

/**
 * Customers' deposits on chain (src/services/chain-deposits.ts): the addresses they pay from, the
 * transfers credited to them, and the deposit scanner's cursor per chain and asset.
 */

/**
 * Registers an address to a customer on a chain, unless it is registered already; answers the
 * customer it is registered to (this one, or the one that registered it first).
 */
export async function registerDepositAddressRow(
  db: Queryable,
  a: { chainId: bigint; address: string; marketplaceId: string; customerId: string; createdBy: string },
): Promise<{ marketplace_id: string; customer_id: string }> {
  const rows = await db.query<{ marketplace_id: string; customer_id: string }>(
    `insert into deposit_addresses (chain_id, address, marketplace_id, customer_id, created_by) values ($1, $2, $3, $4, $5)
     on conflict (chain_id, address) do update set chain_id = excluded.chain_id returning marketplace_id, customer_id`,
    [a.chainId.toString(), a.address, a.marketplaceId, a.customerId, a.createdBy],
  );
  return rows[0]!;
}

export type DepositAddressOwnerRow = { address: string; marketplace_id: string; customer_id: string; billing: "prepaid" | "postpaid" };

/** The customers (and their billing) that registered these addresses on a chain. */
export async function depositAddressOwners(db: Queryable, chainId: bigint, addresses: string[]): Promise<DepositAddressOwnerRow[]> {
  return db.query<DepositAddressOwnerRow>(
    `select d.address, d.marketplace_id, d.customer_id, c.billing from deposit_addresses d
       join customers c on c.marketplace_id = d.marketplace_id and c.id = d.customer_id
      where d.chain_id = $1 and d.address = any($2::text[])`,
    [chainId.toString(), pgArray(addresses)],
  );
}

/**
 * Takes the lock of a transaction hash received on chain, until the transaction ends (see
 * lockReceivedTransactions in src/services/chain-deposits.ts).
 */
export async function lockReceivedTransaction(tx: Queryable, txHash: string): Promise<void> {
  await tx.query("select pg_advisory_xact_lock(hashtextextended($1, 0))", [`received-tx:${txHash}`]);
}

/** Of `txHashes` (lowercase), those credited to a customer as on-chain deposits (of one asset, or of any). */
export async function depositedTransactions(db: Queryable, txHashes: string[], assetId: string | null = null): Promise<string[]> {
  const rows = await db.query<{ h: string }>(
    "select distinct lower(tx_hash) as h from chain_deposits where lower(tx_hash) = any($1::text[]) and ($2::uuid is null or asset_id = $2)",
    [pgArray(txHashes), assetId],
  );
  return rows.map((r) => r.h);
}

/** The customer a transfer into the vault (chain, transaction in lowercase, log) was credited to as a deposit, if it was. */
export async function depositOfTransfer(
  db: Queryable,
  chainId: string,
  txHash: string,
  logIndex: number,
): Promise<{ marketplace_id: string; customer_id: string } | undefined> {
  const [row] = await db.query<{ marketplace_id: string; customer_id: string }>(
    "select marketplace_id, customer_id from chain_deposits where chain_id = $1 and lower(tx_hash) = $2 and log_index = $3",
    [chainId, txHash, logIndex],
  );
  return row;
}

/** Records a deposit credited to a customer by its transfer; a deposit recorded already is left as it is. */
export async function insertChainDeposit(
  tx: Queryable,
  d: {
    chainId: string;
    txHash: string;
    logIndex: number;
    assetId: string;
    fromAddress: string;
    amount: bigint;
    blockNumber: bigint;
    marketplaceId: string;
    customerId: string;
    transferId: string;
  },
): Promise<void> {
  await tx.query(
    `insert into chain_deposits (chain_id, tx_hash, log_index, asset_id, from_address, amount, block_number, marketplace_id, customer_id, transfer_id)
             values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) on conflict do nothing`,
    [d.chainId, d.txHash, d.logIndex, d.assetId, d.fromAddress, d.amount.toString(), d.blockNumber.toString(), d.marketplaceId, d.customerId, d.transferId],
  );
}

/** Starts the deposit scanner's cursor of a chain and asset at `startBlock`, unless it has one. */
export async function ensureDepositCursor(db: Queryable, chainId: bigint, assetId: string, startBlock: string): Promise<void> {
  await db.query("insert into chain_cursors (chain_id, asset_id, next_block) values ($1, $2, $3) on conflict do nothing", [
    chainId.toString(),
    assetId,
    startBlock,
  ]);
}

/** The next block the deposit scanner reads for a chain and asset. */
export async function depositCursor(db: Queryable, chainId: bigint, assetId: string): Promise<bigint> {
  const [cursor] = await db.query<{ next_block: string }>("select next_block::text as next_block from chain_cursors where chain_id = $1 and asset_id = $2", [
    chainId.toString(),
    assetId,
  ]);
  return BigInt(cursor!.next_block);
}

/** Moves the cursor to `nextBlock`, only forward. */
export async function advanceDepositCursor(db: Queryable, chainId: bigint, assetId: string, nextBlock: bigint): Promise<void> {
  await db.query("update chain_cursors set next_block = greatest(next_block, $3), updated_at = now() where chain_id = $1 and asset_id = $2", [
    chainId.toString(),
    assetId,
    nextBlock.toString(),
  ]);
}

export type DepositAddressRow = { chain_id: string; address: string; created_by: string; created_at: Date | string };

/** A page of a customer's deposit addresses by (chain, address), after the cursor's pair. */
export async function listDepositAddressRows(
  db: Queryable,
  f: { marketplaceId: string; customerId: string; after?: { chainId: bigint; address: string }; limit: number },
): Promise<DepositAddressRow[]> {
  return db.query<DepositAddressRow>(
    `select chain_id::text as chain_id, address, created_by, created_at from deposit_addresses
      where marketplace_id = $1 and customer_id = $2 and ($3::numeric is null or (chain_id, address) > ($3::numeric, $4::text))
      order by chain_id, address limit $5`,
    [f.marketplaceId, f.customerId, f.after?.chainId.toString() ?? null, f.after?.address ?? null, f.limit],
  );
}

/**
 * Receipts whose reference key is long enough to name a transaction hash (64 digits), for `verify`;
 * `asset_id` null for a receipt in an off-chain unit (it names the payment in every asset).
 */
export async function receiptsNamingLongReferences(
  db: Queryable,
): Promise<{ id: string; asset_id: string | null; reference: string; reference_key: string }[]> {
  return db.query(
    `select r.id, case when a.settlement = 'offchain' then null else r.asset_id end as asset_id, r.reference, r.reference_key
       from funds_receipts r join assets a on a.id = r.asset_id where length(r.reference_key) >= 64`,
  );
}

/**
 * Rejected receipt proposals of these assets, or of an off-chain unit (which names a payment in
 * every asset), not yet looked at again on this chain (oldest decision first): the deposits they
 * named were skipped while they stood (recheckRejectedReceipts).
 */
export async function rejectedReceiptsToRecheck(
  db: Queryable,
  chainId: bigint,
  assetIds: string[],
  limit: number,
): Promise<{ id: string; asset_id: string; reference_key: string }[]> {
  return db.query(
    `select p.id, p.payload->>'asset_id' as asset_id, p.payload->>'reference_key' as reference_key
       from proposals p
      where p.kind = 'receipt' and p.status = 'rejected'
        and (p.payload->>'asset_id' = any($2::text[])
             or exists (select 1 from assets a where a.id::text = p.payload->>'asset_id' and a.settlement = 'offchain'))
        and not exists (select 1 from receipt_rechecks r where r.proposal_id = p.id and r.chain_id = $1)
      order by p.decided_at, p.id
      limit $3`,
    [chainId.toString(), pgArray(assetIds), limit],
  );
}

/** Notes that a rejected receipt proposal was looked at again on a chain. */
export async function markReceiptRechecked(db: Queryable, proposalId: string, chainId: bigint): Promise<void> {
  await db.query("insert into receipt_rechecks (proposal_id, chain_id) values ($1, $2) on conflict do nothing", [proposalId, chainId.toString()]);
}

export type ReceiptNamedDeposit = { txHash: string; logIndex: number; from: string; amount: bigint; blockNumber: bigint };

/** Keeps transfers into the vault not credited because a receipt proposal named their transaction (once each). */
export async function insertReceiptNamedDeposits(tx: Queryable, chainId: bigint, assetId: string, rows: ReceiptNamedDeposit[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(
    `insert into receipt_named_deposits (chain_id, tx_hash, log_index, asset_id, from_address, amount, block_number)
     select $1, h, l, $2, f, a, b from unnest($3::text[], $4::int[], $5::text[], $6::numeric[], $7::bigint[]) as u(h, l, f, a, b)
     on conflict do nothing`,
    [
      chainId.toString(),
      assetId,
      pgArray(rows.map((r) => r.txHash.toLowerCase())),
      pgArray(rows.map((r) => String(r.logIndex))),
      pgArray(rows.map((r) => r.from)),
      pgArray(rows.map((r) => r.amount.toString())),
      pgArray(rows.map((r) => r.blockNumber.toString())),
    ],
  );
}

/** The transfers of an asset into the vault kept as named by a receipt proposal, of these transactions (lowercase). */
export async function receiptNamedDeposits(db: Queryable, chainId: bigint, assetId: string, txHashes: string[]): Promise<ReceiptNamedDeposit[]> {
  const rows = await db.query<{ tx_hash: string; log_index: number; from_address: string; amount: string; block_number: string }>(
    `select tx_hash, log_index, from_address, amount::text as amount, block_number::text as block_number from receipt_named_deposits
      where chain_id = $1 and asset_id = $2 and tx_hash = any($3::text[]) order by block_number, tx_hash, log_index`,
    [chainId.toString(), assetId, pgArray(txHashes)],
  );
  return rows.map((r) => ({
    txHash: r.tx_hash,
    logIndex: Number(r.log_index),
    from: r.from_address,
    amount: BigInt(r.amount),
    blockNumber: BigInt(r.block_number),
  }));
}
