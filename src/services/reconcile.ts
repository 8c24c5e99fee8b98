import { writeReceipts, type WriteReceipt } from "../db/queries/write-receipts.js";
import type { Settlements } from "../chain/settlement.js";
import type { Database, Queryable } from "../db/client.js";
import { type Asset } from "../domain/assets.js";
import { findOpenAdjustmentProposalId } from "../db/queries/proposals.js";
import {
  getItemResolution,
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
import { creditDeposits, type DepositOutcome } from "./chain-deposits.js";
import { checkAdjustment } from "./check-adjustment.js";
import { refuseRecordedInflow } from "./recorded-inflows.js";

export type { ItemRow } from "../db/queries/reconciliations.js";
export { treasuryCheck } from "./treasury-check.js";
export { checkAdjustment } from "./check-adjustment.js";

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

/** Whether the ledger holds the transfer into the treasury: credited as a deposit, recorded by an approved receipt or by an adjustment. */
const inLedger = (o: DepositOutcome) => o.kind === "credited" || o.kind === "adjusted" || (o.kind === "receipt" && o.approved);

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
      status: inLedger(o) ? "matched" : "unexpected_on_chain",
      direction: "in",
      payoutId: null,
      txHash: t.txHash.toLowerCase(),
      logIndex: t.logIndex,
      blockNumber: t.blockNumber,
      ledgerAmount: inLedger(o) ? t.amount : null,
      chainAmount: t.amount,
      ledgerAddress: o.kind === "credited" ? t.from : null,
      chainAddress: t.from,
      detail:
        o.kind === "credited"
          ? `deposit of customer ${o.marketplaceId}/${o.customerId}`
          : o.kind === "receipt"
            ? `recorded as a receipt (proposal ${o.proposalId}${o.approved ? "" : ", not yet approved"})`
            : o.kind === "adjusted"
              ? `recorded by the adjustment of reconciliation item ${o.itemId}`
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
  const checked = a ? await checkAdjustment(db, runId, itemId, a) : undefined;
  if (!a && input.approvedBy === undefined) {
    // A note does not settle an item whose adjustment waits for a second key: that proposal decides it.
    const open = await findOpenAdjustmentProposalId(db, itemId);
    if (open !== undefined)
      throw new LedgerError("item_already_resolved", `item ${itemId} has an adjustment waiting for approval (proposal ${open}): approve or reject it`);
  }
  const inputs = checked ? [adjustmentTransfer(checked.key, a!, input)] : [];
  let done = false;
  // Judged again under the payment's lock (recorded-inflows.ts) when the adjustment names one.
  const build = async (tx: Queryable) => (await refuseRecordedInflow(tx, itemId, checked?.inflow ?? null, true), inputs);
  const [result] = await writeTransfers(db, build, {
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
