import { writeReceipts, type WriteReceipt } from "../db/queries/write-receipts.js";
import type { Settlements } from "../chain/settlement.js";
import type { Database, Queryable } from "../db/client.js";
import { type Asset } from "../domain/assets.js";
import { findOpenAdjustmentProposalId } from "../db/queries/proposals.js";
import {
  adjustedElsewhere,
  getAdjustmentAccounts,
  type Discrepancy,
  type ItemToAdjustRow,
  getItemResolution,
  getItemToAdjust,
  getReconciliationItem,
  getReconciliationRow,
  insertReconciliation,
  insertReconciliationItems,
  listReconciliationItems,
  listReconciliationRows,
  markItemResolved,
  payoutsToReconcile,
  type ItemRow,
  type ReconciliationRow,
} from "../db/queries/reconciliations.js";
import { writeTransfers } from "../db/transfer-writer.js";
import { LedgerError } from "../domain/errors.js";
import { uuidv7 } from "../domain/ids.js";
import { matchPayouts, summarize, type ItemStatus, type LedgerPayout, type ReconciliationItem } from "../domain/reconcile.js";
import { assetOrThrow, evmRoute, type EvmRoute } from "./evm-route.js";
import { creditDeposits } from "./chain-deposits.js";

export type { ItemRow } from "../db/queries/reconciliations.js";
export { treasuryCheck } from "./treasury-check.js";

/** The widest block range one run may cover. */
export const MAX_RANGE_BLOCKS = 5_000_000n;

/**
 * Compares the ledger's confirmed payouts of a chain and asset with the vault's payments in a
 * block range, and transfers into the treasury (crediting registered customers' deposits, once).
 * Stores the run and its items; a rerun over the same range gives the same items.
 */
export async function runReconciliation(
  db: Database,
  settlements: Settlements,
  input: { chainId: bigint; asset: string; fromBlock: bigint; toBlock: bigint; requestedBy: string; receipt?: WriteReceipt<void> },
): Promise<string> {
  const asset = await assetOrThrow(db, input.asset);
  const { chain, token } = evmRoute(settlements, asset, input.chainId);
  await checkFinalRange(chain, input);

  const paid = await chain.paidLogs(token, input.fromBlock, input.toBlock);
  // Payouts recorded as paid in the range, and any payout a payment of the range names, whatever its state.
  const rows = await payoutsToReconcile(db, {
    chainId: input.chainId,
    assetId: asset.id,
    fromBlock: input.fromBlock,
    toBlock: input.toBlock,
    payoutIds: paid.map((p) => p.payoutId).filter((id) => /^[0-9a-f-]{36}$/.test(id)),
  });
  const ledger: LedgerPayout[] = rows.map((r) => ({
    payoutId: r.id,
    status: r.status,
    inRange: r.in_range,
    amount: BigInt(r.amount),
    recipient: r.to_address,
    txHash: r.tx_hash,
    logIndex: r.log_index,
    blockNumber: r.block_number === null ? null : BigInt(r.block_number),
  }));
  const items = matchPayouts(
    ledger,
    paid.map((p) => ({ ...p, txHash: p.txHash.toLowerCase() })),
  );

  if (token !== null) items.push(...(await depositItems(db, chain, asset, token, input)));

  const id = uuidv7();
  await db.transaction(async (tx) => {
    await insertReconciliation(tx, {
      id,
      chainId: input.chainId,
      assetId: asset.id,
      fromBlock: input.fromBlock,
      toBlock: input.toBlock,
      summary: summarize(items),
      requestedBy: input.requestedBy,
    });
    if (items.length > 0) await insertReconciliationItems(tx, id, items);
    if (input.receipt) await writeReceipts(tx, [{ receipt: input.receipt, result: undefined }], db.clock.now());
  });
  return id;
}

/** A run covers at most MAX_RANGE_BLOCKS blocks, all final (what a reorg may still undo is neither credited nor judged). */
async function checkFinalRange(chain: EvmRoute["chain"], input: { fromBlock: bigint; toBlock: bigint }): Promise<void> {
  if (input.fromBlock > input.toBlock)
    throw new LedgerError("invalid_request", "from_block must not be after to_block", [{ path: "fromBlock", message: "after to_block" }]);
  if (input.toBlock - input.fromBlock + 1n > MAX_RANGE_BLOCKS)
    throw new LedgerError("invalid_request", `a run covers at most ${MAX_RANGE_BLOCKS} blocks`, [{ path: "toBlock", message: "range too wide" }]);
  const head = await chain.head();
  const final = head - BigInt(chain.settings.confirmations) + 1n;
  if (input.toBlock > final) {
    throw new LedgerError(
      "invalid_request",
      `to_block ${input.toBlock} is not final yet: the chain's head is ${head} and ${chain.settings.confirmations} confirmations are required (at most ${final})`,
      [{ path: "toBlock", message: "not final yet" }],
    );
  }
}

/** Transfers into the treasury in the range: registered customers' deposits are credited (once), the rest reported. */
async function depositItems(
  db: Database,
  chain: EvmRoute["chain"],
  asset: Asset,
  token: NonNullable<EvmRoute["token"]>,
  input: { fromBlock: bigint; toBlock: bigint },
): Promise<ReconciliationItem[]> {
  const inbound = await chain.transfersIn(token, input.fromBlock, input.toBlock);
  const outcomes = await creditDeposits(db, chain, asset, inbound);
  return inbound.map((t, i): ReconciliationItem => {
    const o = outcomes[i]!;
    return {
      status: o.kind === "credited" || (o.kind === "receipt" && o.approved) ? "matched" : "unexpected_on_chain",
      direction: "in",
      payoutId: null,
      txHash: t.txHash.toLowerCase(),
      logIndex: t.logIndex,
      blockNumber: t.blockNumber,
      ledgerAmount: o.kind === "credited" || (o.kind === "receipt" && o.approved) ? t.amount : null,
      chainAmount: t.amount,
      ledgerAddress: o.kind === "credited" ? t.from : null,
      chainAddress: t.from,
      detail:
        o.kind === "credited"
          ? `deposit of customer ${o.marketplaceId}/${o.customerId}`
          : o.kind === "receipt"
            ? `recorded as a receipt (proposal ${o.proposalId}${o.approved ? "" : ", not yet approved"})`
            : "a transfer into the treasury from an address no customer registered",
    };
  });
}

export interface ReconciliationRun {
  id: string;
  chainId: bigint;
  assetId: string;
  assetCode: string;
  fromBlock: bigint;
  toBlock: bigint;
  summary: Record<ItemStatus, number>;
  requestedBy: string;
  createdAt: Date;
}

const toRun = (r: ReconciliationRow): ReconciliationRun => ({
  id: r.id,
  chainId: BigInt(r.chain_id),
  assetId: r.asset_id,
  assetCode: r.code,
  fromBlock: BigInt(r.from_block),
  toBlock: BigInt(r.to_block),
  summary: r.summary,
  requestedBy: r.requested_by,
  createdAt: new Date(r.created_at),
});

export async function getReconciliation(db: Queryable, id: string): Promise<ReconciliationRun | undefined> {
  const r = await getReconciliationRow(db, id);
  return r && toRun(r);
}

/** Runs, newest first, after the run `before` of the previous page; filtered by chain and asset. */
export async function listReconciliations(
  db: Queryable,
  f: { chainId?: bigint; assetId?: string; before?: string; limit: number },
): Promise<ReconciliationRun[]> {
  return (await listReconciliationRows(db, f)).map(toRun);
}

export async function listItems(db: Queryable, runId: string, f: { status?: ItemStatus; after?: bigint; limit: number }): Promise<ItemRow[]> {
  return listReconciliationItems(db, runId, f);
}

/**
 * Resolves an item with a note, and optionally an adjusting transfer (recorded in the ledger with
 * the reconciliation in its metadata), in one transaction. An item is resolved once.
 *
 * An adjustment corrects the discrepancy the item shows, and nothing else: only an item that has
 * one (not `matched`), between the run's treasury account (the service's `treasury:{chain}` of the
 * run's asset) and an account that is not one of the service's (an equity, suspense or loss account
 * an admin opened), for at most the discrepancy's amount. So no adjustment can credit an operator,
 * a customer or a fee account.
 */
export async function resolveItem(
  db: Database,
  input: {
    runId: string;
    itemId: bigint;
    note: string;
    adjustment?: { debitAccountId: string; creditAccountId: string; amount: bigint };
    resolvedBy: string;
    /** The second key that approved the adjustment, and what else to write in the same transaction (the proposal's decision). */
    approvedBy?: string;
    alsoInTx?: (tx: Queryable, bookedAt: Date, transferId: string | null) => Promise<void>;
    /** The receipt of the API call that resolved it, written with the resolution. */
    receipt?: WriteReceipt<void>;
  },
): Promise<ItemRow> {
  const { runId, itemId } = input;
  const item = await getItemResolution(db, runId, itemId);
  if (!item) throw new LedgerError("reconciliation_item_not_found", `item ${itemId} of reconciliation ${runId} does not exist`);
  if (item.resolved_at !== null) throw new LedgerError("item_already_resolved", `item ${itemId} was resolved already`);
  const a = input.adjustment;
  const key = a ? (await checkAdjustment(db, runId, itemId, a)).key : undefined;
  if (!a && input.approvedBy === undefined) {
    // A note does not settle an item whose adjustment waits for a second key: that proposal decides it.
    const open = await findOpenAdjustmentProposalId(db, itemId);
    if (open !== undefined)
      throw new LedgerError("item_already_resolved", `item ${itemId} has an adjustment waiting for approval (proposal ${open}): approve or reject it`);
  }
  const inputs = a ? [adjustmentTransfer(key!, a, input)] : [];
  let done = false;
  const [result] = await writeTransfers(db, inputs, {
    afterWrite: async (tx, outcomes, bookedAt) => {
      if (outcomes[0]?.kind === "refused") throw outcomes[0].error;
      const transferId = outcomes[0]?.kind === "created" ? outcomes[0].transfer.id : outcomes[0]?.kind === "replayed" ? outcomes[0].id : null;
      const updated = await markItemResolved(tx, {
        runId,
        itemId,
        resolvedBy: input.resolvedBy,
        note: input.note,
        adjustmentTransferId: transferId,
        resolvedAt: bookedAt,
      });
      if (!updated) throw new LedgerError("item_already_resolved", `item ${itemId} was resolved already`);
      await input.alsoInTx?.(tx, bookedAt, transferId);
      if (input.receipt) await writeReceipts(tx, [{ receipt: input.receipt, result: undefined }], bookedAt);
      done = true;
    },
  });
  if (result && !result.ok) throw result.error;
  if (!done) throw new LedgerError("item_already_resolved", `item ${itemId} was resolved already`);
  return (await getItem(db, itemId))!;
}

/** The adjusting transfer of an item: one per discrepancy (its key, from checkAdjustment), whichever run's item names it. */
function adjustmentTransfer(
  key: string,
  a: { debitAccountId: string; creditAccountId: string; amount: bigint },
  input: { runId: string; itemId: bigint; note: string; resolvedBy: string; approvedBy?: string },
) {
  return {
    kind: "standard" as const,
    idempotencyKey: key,
    metadata: {
      reconciliation: {
        id: input.runId,
        item_id: input.itemId.toString(),
        note: input.note,
        resolved_by: input.resolvedBy,
        ...(input.approvedBy ? { approved_by: input.approvedBy } : {}),
      },
    },
    legs: [{ debitAccountId: a.debitAccountId, creditAccountId: a.creditAccountId, amount: a.amount }],
  };
}

export async function getItem(db: Queryable, itemId: bigint): Promise<ItemRow | undefined> {
  return getReconciliationItem(db, itemId);
}

/**
 * Checks an adjustment of an item (see resolveItem) and that no item of any run showing the same
 * discrepancy was adjusted already; returns the adjustment's idempotency key, the discrepancy's:
 * the chain, asset and on-chain transfer (or, for a payment that never happened, the payout).
 */
export async function checkAdjustment(
  db: Queryable,
  runId: string,
  itemId: bigint,
  a: { debitAccountId: string; creditAccountId: string; amount: bigint },
): Promise<{ key: string; discrepancy: Discrepancy }> {
  const item = await getItemToAdjust(db, runId, itemId);
  const refuse = (message: string, path: string) => {
    throw new LedgerError("invalid_request", message, [{ path: `adjustment.${path}`, message }]);
  };
  if (item!.status === "matched") refuse(`item ${itemId} is matched: there is no discrepancy to adjust`, "amount");
  // A payment to the wrong recipient leaves the treasury right: what is owed is the operator's, not a treasury adjustment.
  if (item!.status === "recipient_mismatch")
    refuse(`item ${itemId} is a payment to another recipient: the treasury is right, so there is nothing to adjust here; resolve it with a note`, "amount");
  const ledger = BigInt(item!.ledger_amount ?? "0");
  const chain = BigInt(item!.chain_amount ?? "0");
  const gap = item!.status === "amount_mismatch" ? (chain > ledger ? chain - ledger : ledger - chain) : item!.status === "unexpected_on_chain" ? chain : ledger;
  if (a.amount > gap) refuse(`the adjustment of ${a.amount} exceeds the item's discrepancy of ${gap}`, "amount");
  const accounts = await getAdjustmentAccounts(db, [a.debitAccountId, a.creditAccountId]);
  const byId = new Map(accounts.map((x) => [x.id, x]));
  const isTreasury = (id: string) => {
    const x = byId.get(id);
    return x !== undefined && x.opened_by_service && x.marketplace_id === null && x.asset_id === item!.asset_id && x.ref === `treasury:${item!.chain_id}`;
  };
  const debitTreasury = isTreasury(a.debitAccountId);
  const creditTreasury = isTreasury(a.creditAccountId);
  if (debitTreasury === creditTreasury) {
    refuse(
      `an adjustment moves money between the run's treasury account (treasury:${item!.chain_id}) and an account of the platform's books, not of the service's chart`,
      debitTreasury ? "credit_account_id" : "debit_account_id",
    );
  }
  // The side of the treasury follows the discrepancy: more on chain than booked (an inflow the ledger
  // does not know, a payout booked but never sent, one sent for less) debits it; less on chain
  // (an outflow the ledger does not know, a payout sent for more) credits it.
  const onChainMore = item!.status === "unexpected_on_chain" ? item!.direction === "in" : item!.status === "missing_on_chain" ? true : chain < ledger;
  if (debitTreasury !== onChainMore) {
    refuse(
      `the chain holds ${onChainMore ? "more" : "less"} than the ledger for this item: the adjustment ${onChainMore ? "debits" : "credits"} the treasury`,
      onChainMore ? "debit_account_id" : "credit_account_id",
    );
  }
  const other = debitTreasury ? "credit_account_id" : "debit_account_id";
  const counter = byId.get(debitTreasury ? a.creditAccountId : a.debitAccountId);
  if (!counter) refuse("the account does not exist", other);
  if (counter!.opened_by_service || counter!.marketplace_id !== null) {
    refuse(
      `account ${counter!.ref ?? counter!.id} is not an account of the platform's books (an equity, suspense or loss account an admin opened): adjustments cannot credit or debit operators, customers, marketplaces or fees`,
      other,
    );
  }
  return notAdjustedElsewhere(db, itemId, item!);
}

/** The item's discrepancy and the key of its adjustment, once no item of any run showing it was adjusted already. */
async function notAdjustedElsewhere(db: Queryable, itemId: bigint, item: ItemToAdjustRow): Promise<{ key: string; discrepancy: Discrepancy }> {
  const discrepancy: Discrepancy = {
    chainId: item.chain_id,
    assetId: item.asset_id,
    txHash: item.tx_hash,
    logIndex: item.log_index,
    payoutId: item.payout_id,
  };
  const done = await adjustedElsewhere(db, discrepancy);
  if (done) {
    const what = item.tx_hash !== null ? `transfer ${item.tx_hash} (log ${item.log_index})` : `payout ${item.payout_id}`;
    throw new LedgerError(
      "item_already_resolved",
      `the discrepancy of item ${itemId} (${what}) was adjusted already, by item ${done.id} of reconciliation ${done.reconciliation_id} (transfer ${done.adjustment_transfer_id}): resolve this item with a note (reject its adjustment proposal first, if one waits)`,
    );
  }
  const identity = item.tx_hash !== null ? `tx:${item.tx_hash}:${item.log_index}` : `payout:${item.payout_id}`;
  return { key: `reconciliation-adjustment:${item.chain_id}:${item.asset_id}:${identity}`, discrepancy };
}
