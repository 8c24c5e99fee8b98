import type { Queryable } from "../../db/client.js";
import { depositedTransactions } from "../../db/queries/deposits.js";
import { adjustedInflowOf } from "../../db/queries/reconciliations.js";
import { findReceiptProposalIdByReference, receiptProposalsByReferenceKeys } from "../../db/queries/proposals.js";
import { LedgerError } from "../../domain/errors.js";
import { referenceKey, txHashesIn } from "../../domain/references.js";
import { isTransferAmount } from "../../domain/money.js";
import { lockReceivedTransactions } from "../chain-deposits.js";
import { getCustomer } from "../marketplaces.js";
import { marketplacePricing } from "../../db/queries/conversions.js";
import { mayPropose, recordProposal, requireAsset, requireMarketplace, type Proposal, type Proposing } from "./proposal.js";

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
export async function proposeReceipt(db: Queryable, { now, by, ...input }: Proposing<ReceiptInput>): Promise<Proposal> {
  mayPropose(by, "receipt");
  await requireMarketplace(db, input.marketplaceId);
  const asset = await requireAsset(db, input.asset);
  const pricing = await marketplacePricing(db, input.marketplaceId);
  if (input.customerId === undefined && pricing !== undefined && pricing.id !== asset.id) {
    // A settlement pays what the marketplace owes, which is in its pricing currency.
    const message = `marketplace ${input.marketplaceId} prices in ${pricing.code}: its settlements are received in ${pricing.code} (a customer's money in ${asset.code} is converted when received)`;
    throw new LedgerError("asset_mismatch", message, [{ path: "asset", message: `must be ${pricing.code}` }]);
  }
  if (input.customerId !== undefined && !(await getCustomer(db, input.marketplaceId, input.customerId))) {
    throw new LedgerError("customer_not_found", `customer ${input.customerId} of marketplace ${input.marketplaceId} does not exist`, [
      { path: "customer_id", message: "does not exist" },
    ]);
  }
  if (!isTransferAmount(input.amount))
    throw new LedgerError("invalid_request", "amount must be a positive integer of at most 2^256 - 1", [{ path: "amount", message: "out of range" }]);
  const key = referenceKey(input.reference);
  if (key === "")
    throw new LedgerError("invalid_request", "reference must hold letters or digits", [{ path: "reference", message: "holds no letters or digits" }]);
  const exists = (what: string) =>
    new LedgerError(
      "receipt_exists",
      `${what} with reference ${JSON.stringify(input.reference)} (compared as ${JSON.stringify(key)}) is already recorded; money is received once`,
      [{ path: "reference", message: "already used" }],
    );
  const dup = await findReceiptProposalIdByReference(db, asset.id, key);
  if (dup !== undefined) throw exists(`a receipt of ${asset.code} (proposal ${dup})`);
  // A reference that names an on-chain transaction, however it spells the hash: that payment is
  // received once in each asset (one transaction may carry several tokens). Under the hashes' locks (held until this proposal commits), as the deposit
  // scanner takes them: crediting the same hash at the same moment, it either finished first and
  // is seen here, or waits and sees this receipt; another receipt naming the hash likewise.
  const hashes = txHashesIn(key);
  if (hashes.length > 0) {
    await lockReceivedTransactions(db, hashes);
    // A transaction carries no off-chain unit: a receipt in one that names a transaction stands for
    // a token it paid into the vault, whichever that was, so it is judged against every asset's.
    const of = asset.settlement.kind === "offchain" ? null : asset.id;
    const what = of === null ? "any asset" : asset.code;
    const deposited = await depositedTransactions(db, hashes, of);
    if (deposited.length > 0) throw exists(`an on-chain deposit of ${what} credited to a customer (transaction ${deposited[0]})`);
    const named = await receiptProposalsByReferenceKeys(db, hashes, of);
    if (named.length > 0) throw exists(`a receipt of ${what} naming transaction ${named[0]!.key} (proposal ${named[0]!.id})`);
    // Booked into the treasury by a reconciliation adjustment (an inflow nobody explained then): received already.
    const adjusted = await adjustedInflowOf(db, hashes, of);
    if (adjusted) throw exists(`a payment of ${what} in transaction ${adjusted.tx_hash} recorded by the adjustment of reconciliation item ${adjusted.id}`);
  }
  try {
    return await recordProposal(db, now, by, "receipt", input.marketplaceId, {
      marketplace_id: input.marketplaceId,
      customer_id: input.customerId ?? null,
      asset: asset.code,
      asset_id: asset.id,
      amount: input.amount.toString(),
      reference: input.reference,
      reference_key: key,
    });
  } catch (err) {
    // A concurrent proposal of the same reference: the unique index decides.
    if ((err as { code?: string }).code === "23505") throw exists(`a receipt of ${asset.code}`);
    throw err;
  }
}
