import { getAddress, verifyMessage } from "viem";
import type { EvmChain } from "../chain/evm.js";
import { settlesOn, type Settlements } from "../chain/settlement.js";
import type { Database, Queryable } from "../db/client.js";
import { ensureAccounts } from "../db/ensure-accounts.js";
import { chart, specKey, type AccountSpec } from "../domain/chart.js";
import type { Asset } from "../domain/assets.js";
import {
  advanceDepositCursor,
  depositAddressOwners,
  depositCursor,
  ensureDepositCursor,
  insertChainDeposit,
  lockReceivedTransaction,
  insertReceiptNamedDeposits,
  markReceiptRechecked,
  receiptNamedDeposits,
  registerDepositAddressRow,
  rejectedReceiptsToRecheck,
} from "../db/queries/deposits.js";
import { hasReceiptProposalForReferenceKeys, receiptProposalsByReferenceKeys } from "../db/queries/proposals.js";
import { adjustedInflows } from "../db/queries/reconciliations.js";
import { writeTransfers } from "../db/transfer-writer.js";
import { LedgerError } from "../domain/errors.js";
import { depositAddressMessage } from "../domain/payouts.js";
import type { TransferInput } from "../domain/transfers.js";
import { getCustomer } from "./marketplaces.js";
import { txHashesIn } from "../domain/references.js";

/**
 * Registers an address a customer pays into the treasury from: transfers of a chain's assets from
 * it into the vault are credited to the customer. The address's holder proves it by signing
 * `depositAddressMessage` (so nobody can have someone else's payments, e.g. the treasury's own
 * funding, credited to a customer). An address belongs to one customer per chain.
 */
export async function registerDepositAddress(
  db: Queryable,
  settlements: Settlements,
  input: { marketplaceId: string; customerId: string; chainId: bigint; address: string; signature: string; createdBy: string },
) {
  settlements.requireAddressOn(input.chainId, input.address);
  if (!(await getCustomer(db, input.marketplaceId, input.customerId)))
    throw new LedgerError("customer_not_found", `customer ${input.customerId} does not exist`);
  const address = input.address.toLowerCase();
  const message = depositAddressMessage({
    marketplaceId: input.marketplaceId,
    customerId: input.customerId,
    chainId: input.chainId,
    address: getAddress(address),
  });
  const valid =
    /^0x[0-9a-fA-F]{130}$/.test(input.signature) &&
    (await verifyMessage({ address: address as `0x${string}`, message, signature: input.signature as `0x${string}` }).catch(() => false));
  if (!valid) {
    throw new LedgerError("signature_invalid", `the signature is not the address's signature of the registration message (${JSON.stringify(message)})`, [
      { path: "signature", message: "does not verify" },
    ]);
  }
  const owner = await registerDepositAddressRow(db, {
    chainId: input.chainId,
    address,
    marketplaceId: input.marketplaceId,
    customerId: input.customerId,
    createdBy: input.createdBy,
  });
  if (owner.marketplace_id !== input.marketplaceId || owner.customer_id !== input.customerId) {
    throw new LedgerError("invalid_request", `address ${address} is already registered to another customer on chain ${input.chainId}`, [
      { path: "address", message: "registered to another customer" },
    ]);
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
  | { kind: "receipt"; proposalId: string; approved: boolean }
  /** Booked into the treasury by the adjustment of a reconciliation item (an inflow nobody explained then): not credited again. */
  | { kind: "adjusted"; itemId: string };

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
      // A receipt proposal of one of these transactions was recorded (or rejected), or an adjustment
      // recorded one, meanwhile: judge them again.
      if (!(err instanceof ReceiptsChanged) || attempt >= 2) throw err;
    }
  }
}

class ReceiptsChanged extends Error {}

/**
 * Serializes the two ways money received on chain enters the ledger — the deposit scanner and a
 * receipt finance records with the transaction hash as its reference — per transaction hash, so
 * that each sees what the other wrote and the same payment is never counted twice.
 */
export async function lockReceivedTransactions(tx: Queryable, txHashes: string[]): Promise<void> {
  for (const h of [...new Set(txHashes.map((x) => x.toLowerCase()))].sort()) {
    await lockReceivedTransaction(tx, h);
  }
}

async function creditDepositsOnce(db: Database, chain: EvmChain, asset: Asset, inbound: InboundTransfer[]): Promise<DepositOutcome[]> {
  if (inbound.length === 0) return [];
  const owners = await depositAddressOwners(db, chain.chainId, [...new Set(inbound.map((t) => t.from))]);
  const ownerOf = new Map(owners.map((o) => [o.address, o]));
  const route = chain.chainId.toString();
  // A payment finance recorded as a receipt of the asset, its reference naming the transaction
  // (in any spelling), is money received already: it is not credited to a customer as well.
  const hashes = [...new Set(inbound.map((t) => t.txHash.toLowerCase()))];
  const receipts = await receiptProposalsByReferenceKeys(db, hashes, asset.id);
  const receiptOf = new Map(receipts.map((r) => [r.key, r]));
  // A payment finance booked into the treasury by adjusting a reconciliation item (its sender
  // registered only later) is in the books already: crediting a customer too would count it twice.
  const adjusted = await adjustedInflows(db, chain.chainId, asset.id, hashes);
  const adjustedOf = (t: InboundTransfer) => adjusted.get(`${t.txHash.toLowerCase()}:${t.logIndex}`);
  const credited = inbound.filter((t) => ownerOf.has(t.from) && !receiptOf.has(t.txHash.toLowerCase()) && adjustedOf(t) === undefined);
  await keepNamed(
    db,
    chain.chainId,
    asset.id,
    inbound.filter((t) => receiptOf.has(t.txHash.toLowerCase())),
  );
  const key = (t: InboundTransfer) => `chain-deposit:${route}:${t.txHash.toLowerCase()}:${t.logIndex}`;
  const transferIds = new Map<string, string>();
  if (credited.length > 0) {
    const results = await writeDeposits(db, asset, route, credited, ownerOf, key);
    for (const [i, r] of results.entries()) if (r.ok) transferIds.set(key(credited[i]!), r.transfer.id);
  }
  return inbound.map((t): DepositOutcome => {
    const r = receiptOf.get(t.txHash.toLowerCase());
    if (r) return { kind: "receipt", proposalId: r.id, approved: r.status === "approved" };
    const itemId = adjustedOf(t);
    if (itemId !== undefined) return { kind: "adjusted", itemId };
    const o = ownerOf.get(t.from);
    return o
      ? { kind: "credited", marketplaceId: o.marketplace_id, customerId: o.customer_id, transferId: transferIds.get(key(t))! }
      : { kind: "unregistered" };
  });
}

/**
 * Keeps the transfers not credited because a receipt proposal names their transaction, so that a
 * rejection of the proposal credits them (recheckRejectedReceipts). Under the transactions' locks,
 * the proposals are read again: one rejected since they were read sends the transfers back to be
 * judged again (credited, now), so that no rejection falls between the judgement and this row.
 */
async function keepNamed(db: Database, chainId: bigint, assetId: string, named: InboundTransfer[]): Promise<void> {
  if (named.length === 0) return;
  const hashes = [...new Set(named.map((t) => t.txHash.toLowerCase()))];
  await db.transaction(async (tx) => {
    await lockReceivedTransactions(tx, hashes);
    const still = new Set((await receiptProposalsByReferenceKeys(tx, hashes, assetId)).map((r) => r.key));
    if (hashes.some((h) => !still.has(h))) throw new ReceiptsChanged();
    await insertReceiptNamedDeposits(tx, chainId, assetId, named);
  });
}

type DepositOwner = Awaited<ReturnType<typeof depositAddressOwners>>[number];

/** Treasury → each depositing customer's account, and the deposit rows, in one transaction under the received-transaction locks. */
async function writeDeposits(
  db: Database,
  asset: Asset,
  route: string,
  credited: InboundTransfer[],
  ownerOf: Map<string, DepositOwner>,
  key: (t: InboundTransfer) => string,
) {
  const specOf = (t: InboundTransfer): AccountSpec => {
    const o = ownerOf.get(t.from)!;
    return chart.customer(asset.id, o.marketplace_id, o.customer_id, o.billing === "prepaid");
  };
  return writeTransfers(
    db,
    async (tx) => {
      await lockReceivedTransactions(
        tx,
        credited.map((t) => t.txHash),
      );
      const hashes = [...new Set(credited.map((t) => t.txHash.toLowerCase()))];
      if (await hasReceiptProposalForReferenceKeys(tx, hashes, asset.id)) throw new ReceiptsChanged();
      // An adjustment approved meanwhile (it takes the same locks): judged again, then not credited.
      const adjusted = await adjustedInflows(tx, BigInt(route), asset.id, hashes);
      if (credited.some((t) => adjusted.has(`${t.txHash.toLowerCase()}:${t.logIndex}`))) throw new ReceiptsChanged();
      const ids = await ensureAccounts(tx, [chart.treasury(asset.id, route), ...credited.map(specOf)]);
      return credited.map((t): TransferInput => ({
        kind: "standard",
        idempotencyKey: key(t),
        metadata: { chain_deposit: { chain_id: route, tx_hash: t.txHash, log_index: t.logIndex, from: t.from } },
        legs: [{ debitAccountId: ids.get(specKey(chart.treasury(asset.id, route)))!, creditAccountId: ids.get(specKey(specOf(t)))!, amount: t.amount }],
      }));
    },
    {
      afterWrite: async (tx, outcomes) => {
        for (const [i, o] of outcomes.entries()) {
          if (o.kind === "refused") throw o.error;
          const t = credited[i]!;
          const owner = ownerOf.get(t.from)!;
          await insertChainDeposit(tx, {
            chainId: route,
            txHash: t.txHash.toLowerCase(),
            logIndex: t.logIndex,
            assetId: asset.id,
            fromAddress: t.from,
            amount: t.amount,
            blockNumber: t.blockNumber,
            marketplaceId: owner.marketplace_id,
            customerId: owner.customer_id,
            transferId: o.kind === "created" ? o.transfer.id : o.id,
          });
        }
      },
    },
  );
}

/**
 * The ERC-20 assets whose deposits are credited on this chain: those that settle on it as its
 * settings say (settlesOn: listed there with the same token and scale, when the settings list the
 * chain's assets). A token registered in the ledger but not enabled on the chain is not read, so
 * nothing paid in it is credited: it waits in the vault, on chain, until the chain enables it.
 */
export function depositAssets(chain: EvmChain, assets: Asset[]): { asset: Asset; token: string }[] {
  return assets.flatMap((asset) => {
    if (asset.settlement.kind !== "erc20") return [];
    const route = settlesOn(chain, asset);
    return route.kind === "evm" && route.token !== null ? [{ asset, token: route.token }] : [];
  });
}

/**
 * The deposit scanner: reads each enabled ERC-20 asset's transfers into the vault (depositAssets)
 * from where it stopped up to the block `confirmations` deep, and credits the registered ones.
 * Returns how many it read.
 */
export async function scanDeposits(db: Database, chain: EvmChain, assets: Asset[], maxBlocks = 10_000n): Promise<number> {
  const head = await chain.head();
  const safe = head - BigInt(chain.settings.confirmations) + 1n;
  let read = 0;
  for (const { asset, token } of depositAssets(chain, assets)) {
    await ensureDepositCursor(db, chain.chainId, asset.id, String(chain.settings.deposit_start_block));
    const from = await depositCursor(db, chain.chainId, asset.id);
    if (from > safe) continue;
    const to = from + maxBlocks - 1n < safe ? from + maxBlocks - 1n : safe;
    const inbound = await chain.transfersIn(token, from, to);
    await creditDeposits(db, chain, asset, inbound);
    read += inbound.length;
    // Only forward: a concurrent scanner that got further is not moved back.
    await advanceDepositCursor(db, chain.chainId, asset.id, to + 1n);
  }
  return read;
}

/**
 * Deposits a receipt proposal named, kept aside by the scanner (or a reconciliation) while the
 * proposal stood (receipt_named_deposits: the payment was being recorded as a receipt), are credited
 * once it is rejected: for each rejected receipt proposal of the chain's enabled assets (depositAssets) not yet looked at
 * again, the transfers kept for the transactions its reference names are credited as the scanner
 * credits them (once, by chain, transaction and log; not while another receipt proposal names
 * them). Nothing is read from the chain: what was read when the transfer was scanned is what is
 * credited, so a node that does not answer, or answers late, loses nothing. Transactions the scanner
 * has not reached yet are credited by the scanner. Returns how many proposals were looked at.
 */
export async function recheckRejectedReceipts(db: Database, chain: EvmChain, assets: Asset[], limit = 50): Promise<number> {
  const ofChain = new Map(depositAssets(chain, assets).map(({ asset }) => [asset.id, asset] as const));
  if (ofChain.size === 0) return 0;
  const rejected = await rejectedReceiptsToRecheck(db, chain.chainId, [...ofChain.keys()], limit);
  for (const p of rejected) {
    // A receipt in an off-chain unit named the payment in every asset: each one's transfers were kept.
    const assetsNamed = ofChain.has(p.asset_id) ? [ofChain.get(p.asset_id)!] : [...ofChain.values()];
    const hashes = txHashesIn(p.reference_key);
    for (const asset of assetsNamed) {
      // Under the transactions' locks: a scan that kept a transfer aside has committed its row (keepNamed).
      const kept = await db.transaction(async (tx) => {
        await lockReceivedTransactions(tx, hashes);
        return receiptNamedDeposits(tx, chain.chainId, asset.id, hashes);
      });
      await creditDeposits(db, chain, asset, kept);
    }
    await markReceiptRechecked(db, p.id, chain.chainId);
  }
  return rejected.length;
}
