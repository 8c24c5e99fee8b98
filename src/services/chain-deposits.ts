import { getAddress, verifyMessage } from "viem";
import type { EvmChain } from "../chain/evm.js";
import type { Settlements } from "../chain/settlement.js";
import type { Database, Queryable } from "../db/client.js";
import { ensureAccounts } from "../db/ensure-accounts.js";
import { chart, specKey, type AccountSpec } from "../domain/chart.js";
import type { Asset } from "../domain/assets.js";
import { pgArray } from "../db/sql-arrays.js";
import { writeTransfers } from "../db/transfer-writer.js";
import { LedgerError } from "../domain/errors.js";
import { depositAddressMessage } from "../domain/payouts.js";
import type { TransferInput } from "../domain/transfers.js";
import { getCustomer } from "./marketplaces.js";

/**
 * Registers an address a customer pays into the treasury from: transfers of a chain's assets from
 * it into the vault are credited to the customer. The address's holder proves it by signing
 * `depositAddressMessage` (so nobody can have someone else's payments, e.g. the treasury's own
 * funding, credited to a customer). An address belongs to one customer per chain.
 */
export async function registerDepositAddress(
  db: Queryable, settlements: Settlements,
  input: { marketplaceId: string; customerId: string; chainId: bigint; address: string; signature: string; createdBy: string },
) {
  settlements.requireAddressOn(input.chainId, input.address);
  if (!(await getCustomer(db, input.marketplaceId, input.customerId))) throw new LedgerError("customer_not_found", `customer ${input.customerId} does not exist`);
  const address = input.address.toLowerCase();
  const message = depositAddressMessage({ marketplaceId: input.marketplaceId, customerId: input.customerId, chainId: input.chainId, address: getAddress(address) });
  const valid = /^0x[0-9a-fA-F]{130}$/.test(input.signature)
    && (await verifyMessage({ address: address as `0x${string}`, message, signature: input.signature as `0x${string}` }).catch(() => false));
  if (!valid) {
    throw new LedgerError("signature_invalid", `the signature is not the address's signature of the registration message (${JSON.stringify(message)})`, [{ path: "signature", message: "does not verify" }]);
  }
  const rows = await db.query<{ marketplace_id: string; customer_id: string }>(
    `insert into deposit_addresses (chain_id, address, marketplace_id, customer_id, created_by) values ($1, $2, $3, $4, $5)
     on conflict (chain_id, address) do update set chain_id = excluded.chain_id returning marketplace_id, customer_id`,
    [input.chainId.toString(), address, input.marketplaceId, input.customerId, input.createdBy]);
  if (rows[0]!.marketplace_id !== input.marketplaceId || rows[0]!.customer_id !== input.customerId) {
    throw new LedgerError("invalid_request", `address ${address} is already registered to another customer on chain ${input.chainId}`, [{ path: "address", message: "registered to another customer" }]);
  }
  return { chainId: input.chainId, address, marketplaceId: input.marketplaceId, customerId: input.customerId };
}

export interface InboundTransfer {
  from: string;
  amount: bigint;
  txHash: string;
  logIndex: number;
  blockNumber: bigint;
}

export type DepositOutcome =
  | { kind: "credited"; marketplaceId: string; customerId: string; transferId: string }
  | { kind: "unregistered" }
  /** Recorded by finance as a receipt (its reference is the transaction hash): received once, so not credited again. */
  | { kind: "receipt"; proposalId: string; approved: boolean };

/**
 * Credits inbound transfers from registered addresses to their customers: treasury → the
 * customer's account, keyed by (chain, transaction, log), so a transfer read twice (by the scanner
 * and by a reconciliation, or by two workers) is credited once.
 */
export async function creditDeposits(db: Database, chain: EvmChain, asset: Asset, inbound: InboundTransfer[]): Promise<DepositOutcome[]> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await creditDepositsOnce(db, chain, asset, inbound);
    } catch (err) {
      // A receipt of one of these transactions was recorded meanwhile: judge them again.
      if (!(err instanceof ReceiptRecordedMeanwhile) || attempt >= 2) throw err;
    }
  }
}

class ReceiptRecordedMeanwhile extends Error {}

/**
 * Serializes the two ways money received on chain enters the ledger — the deposit scanner and a
 * receipt finance records with the transaction hash as its reference — per transaction hash, so
 * that each sees what the other wrote and the same payment is never counted twice.
 */
export async function lockReceivedTransactions(tx: Queryable, txHashes: string[]): Promise<void> {
  for (const h of [...new Set(txHashes.map((x) => x.toLowerCase()))].sort()) {
    await tx.query("select pg_advisory_xact_lock(hashtextextended($1, 0))", [`received-tx:${h}`]);
  }
}

async function creditDepositsOnce(db: Database, chain: EvmChain, asset: Asset, inbound: InboundTransfer[]): Promise<DepositOutcome[]> {
  if (inbound.length === 0) return [];
  const owners = await db.query<{ address: string; marketplace_id: string; customer_id: string; billing: "prepaid" | "postpaid" }>(
    `select d.address, d.marketplace_id, d.customer_id, c.billing from deposit_addresses d
       join customers c on c.marketplace_id = d.marketplace_id and c.id = d.customer_id
      where d.chain_id = $1 and d.address = any($2::text[])`,
    [chain.chainId.toString(), pgArray([...new Set(inbound.map((t) => t.from))])]);
  const ownerOf = new Map(owners.map((o) => [o.address, o]));
  const route = chain.chainId.toString();
  // A payment finance recorded as a receipt, with its transaction hash as the reference, is money
  // received already: it is not credited to a customer as well.
  const receipts = await db.query<{ key: string; id: string; status: string }>(
    "select payload->>'reference_key' as key, id, status from proposals where kind = 'receipt' and status <> 'rejected' and payload->>'reference_key' = any($1::text[])",
    [pgArray([...new Set(inbound.map((t) => t.txHash.toLowerCase()))])]);
  const receiptOf = new Map(receipts.map((r) => [r.key, r]));
  const credited = inbound.filter((t) => ownerOf.has(t.from) && !receiptOf.has(t.txHash.toLowerCase()));
  const specOf = (t: InboundTransfer): AccountSpec => {
    const o = ownerOf.get(t.from)!;
    return chart.customer(asset.id, o.marketplace_id, o.customer_id, o.billing === "prepaid");
  };
  const transferIds = new Map<string, string>();
  const key = (t: InboundTransfer) => `chain-deposit:${route}:${t.txHash.toLowerCase()}:${t.logIndex}`;
  if (credited.length > 0) {
    const results = await writeTransfers(db, async (tx) => {
      await lockReceivedTransactions(tx, credited.map((t) => t.txHash));
      const late = await tx.query(
        "select 1 from proposals where kind = 'receipt' and status <> 'rejected' and payload->>'reference_key' = any($1::text[])",
        [pgArray([...new Set(credited.map((t) => t.txHash.toLowerCase()))])]);
      if (late.length > 0) throw new ReceiptRecordedMeanwhile();
      const ids = await ensureAccounts(tx, [chart.treasury(asset.id, route), ...credited.map(specOf)]);
      return credited.map((t): TransferInput => ({
        kind: "standard", idempotencyKey: key(t),
        metadata: { chain_deposit: { chain_id: route, tx_hash: t.txHash, log_index: t.logIndex, from: t.from } },
        legs: [{ debitAccountId: ids.get(specKey(chart.treasury(asset.id, route)))!, creditAccountId: ids.get(specKey(specOf(t)))!, amount: t.amount }],
      }));
    }, {
      afterWrite: async (tx, outcomes) => {
        for (const [i, o] of outcomes.entries()) {
          if (o.kind === "refused") throw o.error;
          const t = credited[i]!;
          const owner = ownerOf.get(t.from)!;
          await tx.query(
            `insert into chain_deposits (chain_id, tx_hash, log_index, asset_id, from_address, amount, block_number, marketplace_id, customer_id, transfer_id)
             values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) on conflict do nothing`,
            [route, t.txHash.toLowerCase(), t.logIndex, asset.id, t.from, t.amount.toString(), t.blockNumber.toString(), owner.marketplace_id, owner.customer_id,
              o.kind === "created" ? o.transfer.id : o.id]);
        }
      },
    });
    for (const [i, r] of results.entries()) if (r.ok) transferIds.set(key(credited[i]!), r.transfer.id);
  }
  return inbound.map((t): DepositOutcome => {
    const r = receiptOf.get(t.txHash.toLowerCase());
    if (r) return { kind: "receipt", proposalId: r.id, approved: r.status === "approved" };
    const o = ownerOf.get(t.from);
    return o ? { kind: "credited", marketplaceId: o.marketplace_id, customerId: o.customer_id, transferId: transferIds.get(key(t))! } : { kind: "unregistered" };
  });
}

/**
 * The deposit scanner: reads each ERC-20 asset's transfers into the vault from where it stopped
 * up to the block `confirmations` deep, and credits the registered ones. Returns how many it read.
 */
export async function scanDeposits(db: Database, chain: EvmChain, assets: Asset[], maxBlocks = 10_000n): Promise<number> {
  const head = await chain.head();
  const safe = head - BigInt(chain.settings.confirmations) + 1n;
  let read = 0;
  for (const asset of assets) {
    if (asset.settlement.kind !== "erc20" || BigInt(asset.settlement.chainId) !== chain.chainId) continue;
    await db.query("insert into chain_cursors (chain_id, asset_id, next_block) values ($1, $2, $3) on conflict do nothing",
      [chain.chainId.toString(), asset.id, String(chain.settings.deposit_start_block)]);
    const [cursor] = await db.query<{ next_block: string }>("select next_block::text as next_block from chain_cursors where chain_id = $1 and asset_id = $2", [chain.chainId.toString(), asset.id]);
    const from = BigInt(cursor!.next_block);
    if (from > safe) continue;
    const to = from + maxBlocks - 1n < safe ? from + maxBlocks - 1n : safe;
    const inbound = await chain.transfersIn(asset.settlement.tokenAddress, from, to);
    await creditDeposits(db, chain, asset, inbound);
    read += inbound.length;
    // Only forward: a concurrent scanner that got further is not moved back.
    await db.query("update chain_cursors set next_block = greatest(next_block, $3), updated_at = now() where chain_id = $1 and asset_id = $2",
      [chain.chainId.toString(), asset.id, (to + 1n).toString()]);
  }
  return read;
}
