import { and, desc, eq, lt, sql } from "drizzle-orm";
import type { ItemStatus, ReconciliationItem } from "../../domain/reconcile.js";
import type { Queryable } from "../client.js";
import { orm, run } from "../orm.js";
import { assets, reconciliations } from "../schema/index.js";
import { pgArray, pgColumns } from "../sql-arrays.js";

/**
 * Reconciliation runs and their items (src/services/reconcile.ts), and what a run and the treasury
 * check read of payouts, accounts and chain transactions.
 */

export type ReconciledPayoutRow = {
  id: string;
  status: string;
  in_range: boolean;
  amount: string;
  to_address: string;
  tx_hash: string | null;
  log_index: number | null;
  block_number: string | null;
};

/**
 * The payouts of a chain and asset recorded as paid (confirmed) in a block range, and those of
 * `payoutIds` (the ids the range's payments name) whatever their state; `in_range`: the former.
 */
export async function payoutsToReconcile(
  db: Queryable,
  q: { chainId: bigint; assetId: string; fromBlock: bigint; toBlock: bigint; payoutIds: string[] },
): Promise<ReconciledPayoutRow[]> {
  return db.query<ReconciledPayoutRow>(
    `select id, status, (status = 'confirmed' and block_number between $3 and $4) as in_range, amount::text as amount, to_address, tx_hash, log_index,
            block_number::text as block_number
       from payouts
      where chain_id = $1 and asset_id = $2 and ((status = 'confirmed' and block_number between $3 and $4) or id = any($5::uuid[]))`,
    [q.chainId.toString(), q.assetId, q.fromBlock.toString(), q.toBlock.toString(), pgArray(q.payoutIds)],
  );
}

export async function insertReconciliation(
  tx: Queryable,
  r: { id: string; chainId: bigint; assetId: string; fromBlock: bigint; toBlock: bigint; summary: Record<ItemStatus, number>; requestedBy: string },
): Promise<void> {
  await tx.query(
    "insert into reconciliations (id, chain_id, asset_id, from_block, to_block, summary, requested_by) values ($1, $2, $3, $4, $5, $6::text::jsonb, $7)",
    [r.id, r.chainId.toString(), r.assetId, r.fromBlock.toString(), r.toBlock.toString(), JSON.stringify(r.summary), r.requestedBy],
  );
}

/** Inserts a run's items, in their order, with one statement. */
export async function insertReconciliationItems(tx: Queryable, runId: string, items: ReconciliationItem[]): Promise<void> {
  await tx.query(
    `insert into reconciliation_items (reconciliation_id, status, direction, payout_id, tx_hash, log_index, block_number, ledger_amount, chain_amount, ledger_address, chain_address, detail)
     select $1, s, d, p, h, l, b, la, ca, lad, cad, de
       from unnest($2::text[], $3::text[], $4::uuid[], $5::text[], $6::int[], $7::bigint[], $8::numeric[], $9::numeric[], $10::text[], $11::text[], $12::text[])
            with ordinality as u(s, d, p, h, l, b, la, ca, lad, cad, de, n)
      order by n`,
    [
      runId,
      ...(await pgColumns(items, [
        (i) => i.status,
        (i) => i.direction,
        (i) => i.payoutId,
        (i) => i.txHash,
        (i) => i.logIndex,
        (i) => i.blockNumber,
        (i) => i.ledgerAmount,
        (i) => i.chainAmount,
        (i) => i.ledgerAddress,
        (i) => i.chainAddress,
        (i) => i.detail,
      ])),
    ],
  );
}

export type ReconciliationRow = {
  id: string;
  chain_id: string;
  asset_id: string;
  code: string;
  from_block: string;
  to_block: string;
  summary: Record<ItemStatus, number>;
  requested_by: string;
  created_at: Date | string;
};

/** A run, with its asset's code. */
export async function getReconciliationRow(db: Queryable, id: string): Promise<ReconciliationRow | undefined> {
  const [r] = await db.query<ReconciliationRow>(
    `select r.id, r.chain_id::text as chain_id, r.asset_id, s.code, r.from_block::text as from_block, r.to_block::text as to_block, r.summary, r.requested_by, r.created_at
       from reconciliations r join assets s on s.id = r.asset_id where r.id = $1`,
    [id],
  );
  return r;
}

/** Runs, newest first (their ids are time-ordered), before the id `before`; filtered by chain and asset. */
export async function listReconciliationRows(
  db: Queryable,
  f: { chainId?: bigint; assetId?: string; before?: string; limit: number },
): Promise<ReconciliationRow[]> {
  const r = reconciliations;
  return run(
    orm(db)
      .select({
        id: r.id,
        chain_id: sql<string>`${r.chainId}::text`,
        asset_id: r.assetId,
        code: assets.code,
        from_block: sql<string>`${r.fromBlock}::text`,
        to_block: sql<string>`${r.toBlock}::text`,
        summary: sql<ReconciliationRow["summary"]>`${r.summary}`,
        requested_by: r.requestedBy,
        created_at: r.createdAt,
      })
      .from(r)
      .innerJoin(assets, eq(assets.id, r.assetId))
      .where(
        and(
          f.chainId === undefined ? undefined : eq(r.chainId, f.chainId),
          f.assetId === undefined ? undefined : eq(r.assetId, f.assetId),
          f.before === undefined ? undefined : lt(r.id, f.before),
        ),
      )
      .orderBy(desc(r.id))
      .limit(f.limit),
  );
}

export type ItemRow = {
  id: string;
  status: ItemStatus;
  direction: "in" | "out";
  payout_id: string | null;
  tx_hash: string | null;
  log_index: number | null;
  block_number: string | null;
  ledger_amount: string | null;
  chain_amount: string | null;
  ledger_address: string | null;
  chain_address: string | null;
  detail: string | null;
  resolved_at: Date | string | null;
  resolved_by: string | null;
  resolution_note: string | null;
  adjustment_transfer_id: string | null;
};

/** A run's items in id order, filtered; `after`: the last id of the previous page. */
export async function listReconciliationItems(db: Queryable, runId: string, f: { status?: ItemStatus; after?: bigint; limit: number }): Promise<ItemRow[]> {
  return db.query<ItemRow>(
    `select id::text as id, status, direction, payout_id, tx_hash, log_index, block_number::text as block_number, ledger_amount::text as ledger_amount,
            chain_amount::text as chain_amount, ledger_address, chain_address, detail, resolved_at, resolved_by, resolution_note, adjustment_transfer_id
       from reconciliation_items where reconciliation_id = $1 and ($2::text is null or status = $2) and ($3::bigint is null or id > $3)
      order by reconciliation_items.id limit $4`,
    [runId, f.status ?? null, f.after?.toString() ?? null, f.limit],
  );
}

export async function getReconciliationItem(db: Queryable, itemId: bigint): Promise<ItemRow | undefined> {
  const [row] = await db.query<ItemRow>(
    `select id::text as id, status, direction, payout_id, tx_hash, log_index, block_number::text as block_number, ledger_amount::text as ledger_amount,
            chain_amount::text as chain_amount, ledger_address, chain_address, detail, resolved_at, resolved_by, resolution_note, adjustment_transfer_id
       from reconciliation_items where id = $1`,
    [itemId.toString()],
  );
  return row;
}

/** When an item of a run was resolved (null: open); undefined when the run has no such item. */
export async function getItemResolution(db: Queryable, runId: string, itemId: bigint): Promise<{ resolved_at: Date | null } | undefined> {
  const [item] = await db.query<{ resolved_at: Date | null }>("select resolved_at from reconciliation_items where id = $1 and reconciliation_id = $2", [
    itemId.toString(),
    runId,
  ]);
  return item;
}

/** Resolves an item still open; false when it was resolved already. */
export async function markItemResolved(
  tx: Queryable,
  r: { runId: string; itemId: bigint; resolvedBy: string; note: string; adjustmentTransferId: string | null; resolvedAt: Date },
): Promise<boolean> {
  const updated = await tx.query(
    `update reconciliation_items set resolved_at = $6, resolved_by = $3, resolution_note = $4, adjustment_transfer_id = $5
          where id = $1 and reconciliation_id = $2 and resolved_at is null returning id`,
    [r.itemId.toString(), r.runId, r.resolvedBy, r.note, r.adjustmentTransferId, r.resolvedAt.toISOString()],
  );
  return updated.length > 0;
}

export type ItemToAdjustRow = {
  status: ItemStatus;
  direction: "in" | "out";
  ledger_amount: string | null;
  chain_amount: string | null;
  chain_id: string;
  asset_id: string;
  payout_id: string | null;
  tx_hash: string | null;
  log_index: number | null;
};

/** What an adjustment of an item is judged by: the item's kind and amounts, and its run's chain and asset. */
export async function getItemToAdjust(db: Queryable, runId: string, itemId: bigint): Promise<ItemToAdjustRow | undefined> {
  const [item] = await db.query<ItemToAdjustRow>(
    `select i.status, i.direction, i.ledger_amount::text as ledger_amount, i.chain_amount::text as chain_amount, r.chain_id::text as chain_id, r.asset_id,
            i.payout_id, i.tx_hash, i.log_index
       from reconciliation_items i join reconciliations r on r.id = i.reconciliation_id where i.id = $1 and i.reconciliation_id = $2`,
    [itemId.toString(), runId],
  );
  return item;
}

export type AdjustmentAccountRow = { id: string; asset_id: string; ref: string | null; marketplace_id: string | null; opened_by_service: boolean };

/** The accounts an adjustment names, as far as they exist. */
export async function getAdjustmentAccounts(db: Queryable, ids: string[]): Promise<AdjustmentAccountRow[]> {
  return db.query<AdjustmentAccountRow>("select id, asset_id, ref, marketplace_id, opened_by_service from accounts where id = any($1::uuid[])", [pgArray(ids)]);
}

/** The debits and credits posted to the service's treasury account of an asset under `ref` (`treasury:{route}`), if it was opened. */
export async function treasuryAccountTotals(db: Queryable, assetId: string, ref: string): Promise<{ d: string; c: string } | undefined> {
  const [acct] = await db.query<{ d: string; c: string }>(
    `select b.debits_posted::text as d, b.credits_posted::text as c from accounts a join account_balances b on b.account_id = a.id
      where a.asset_id = $1 and a.opened_by_service and a.marketplace_id is null and a.ref = $2`,
    [assetId, ref],
  );
  return acct;
}

export type PayoutsInFlightRow = { chain_tx_id: string; amount: string; payouts: string };

/** Payouts signed or submitted but not confirmed, per chain transaction: their total and count. */
export async function payoutsInFlight(db: Queryable, chainId: string, assetId: string): Promise<PayoutsInFlightRow[]> {
  return db.query<PayoutsInFlightRow>(
    `select chain_tx_id, sum(amount)::text as amount, count(*)::text as payouts from payouts
      where chain_id = $1 and asset_id = $2 and status in ('signed', 'submitted') group by chain_tx_id`,
    [chainId, assetId],
  );
}

/** The hashes of the attempts (each signed version) of a chain transaction. */
export async function chainTxAttemptHashes(db: Queryable, chainTxId: string): Promise<{ hash: `0x${string}` }[]> {
  return db.query<{ hash: `0x${string}` }>("select hash from chain_tx_attempts where chain_tx_id = $1", [chainTxId]);
}

/** The total and count of EVM payouts of a chain and asset not yet batched. */
export async function pendingPayoutTotals(db: Queryable, chainId: string, assetId: string): Promise<{ amount: string; payouts: string } | undefined> {
  const [queued] = await db.query<{ amount: string; payouts: string }>(
    `select coalesce(sum(amount), 0)::text as amount, count(*)::text as payouts from payouts
      where settlement = 'evm' and chain_id = $1 and asset_id = $2 and status = 'pending'`,
    [chainId, assetId],
  );
  return queued;
}

/** The total of EVM payouts of a chain and asset batched but not yet signed. */
export async function batchedPayoutTotal(db: Queryable, chainId: string, assetId: string): Promise<{ amount: string } | undefined> {
  const [batched] = await db.query<{ amount: string }>(
    `select coalesce(sum(amount), 0)::text as amount from payouts
      where settlement = 'evm' and chain_id = $1 and asset_id = $2 and status = 'batched'`,
    [chainId, assetId],
  );
  return batched;
}

/** What identifies a discrepancy across runs: the chain, the asset and the on-chain transfer, or for a payment that never happened the payout. */
export interface Discrepancy {
  chainId: string;
  assetId: string;
  txHash: string | null;
  logIndex: number | null;
  payoutId: string | null;
}

const SAME_DISCREPANCY = `r.chain_id = $1 and r.asset_id = $2
        and (case when $3::text is not null then i.tx_hash = $3 and i.log_index = $4 else i.tx_hash is null and i.payout_id = $5 end)`;
const discrepancyParams = (d: Discrepancy) => [d.chainId, d.assetId, d.txHash, d.logIndex, d.payoutId];

/** An item of any run that shows the same discrepancy and was adjusted: its id, run and transfer. */
export async function adjustedElsewhere(
  db: Queryable,
  d: Discrepancy,
): Promise<{ id: string; reconciliation_id: string; adjustment_transfer_id: string } | undefined> {
  const [row] = await db.query<{ id: string; reconciliation_id: string; adjustment_transfer_id: string }>(
    `select i.id::text as id, i.reconciliation_id, i.adjustment_transfer_id
       from reconciliation_items i join reconciliations r on r.id = i.reconciliation_id
      where i.adjustment_transfer_id is not null and ${SAME_DISCREPANCY}
      order by i.id limit 1`,
    discrepancyParams(d),
  );
  return row;
}

/**
 * Of `txHashes` (lowercase), a transfer into the vault in an asset (or in any, null) that a
 * reconciliation item's adjustment recorded (the treasury debited for it): the first such item,
 * with its transaction.
 */
export async function adjustedInflowOf(db: Queryable, txHashes: string[], assetId: string | null): Promise<{ id: string; tx_hash: string } | undefined> {
  const [row] = await db.query<{ id: string; tx_hash: string }>(
    `select i.id::text as id, lower(i.tx_hash) as tx_hash from reconciliation_items i join reconciliations r on r.id = i.reconciliation_id
      where i.adjustment_transfer_id is not null and i.direction = 'in' and lower(i.tx_hash) = any($1::text[]) and ($2::uuid is null or r.asset_id = $2)
      order by i.id limit 1`,
    [pgArray(txHashes), assetId],
  );
  return row;
}

/**
 * Of these transfers into the vault (chain, transaction lowercase, log), the ones a reconciliation
 * item's adjustment recorded (the treasury debited for it): `tx_hash:log_index` → the item's id.
 */
export async function adjustedInflows(db: Queryable, chainId: bigint, assetId: string, txHashes: string[]): Promise<Map<string, string>> {
  if (txHashes.length === 0) return new Map();
  const rows = await db.query<{ id: string; tx_hash: string; log_index: number }>(
    `select i.id::text as id, lower(i.tx_hash) as tx_hash, i.log_index from reconciliation_items i join reconciliations r on r.id = i.reconciliation_id
      where i.adjustment_transfer_id is not null and i.direction = 'in' and lower(i.tx_hash) = any($1::text[]) and r.chain_id = $2 and r.asset_id = $3
      order by i.id`,
    [pgArray(txHashes), chainId.toString(), assetId],
  );
  const out = new Map<string, string>();
  for (const r of rows) if (!out.has(`${r.tx_hash}:${r.log_index}`)) out.set(`${r.tx_hash}:${r.log_index}`, r.id);
  return out;
}

/** The ids of every item, of any run, that shows this discrepancy. */
export async function itemsOfDiscrepancy(db: Queryable, d: Discrepancy): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    `select i.id::text as id from reconciliation_items i join reconciliations r on r.id = i.reconciliation_id where ${SAME_DISCREPANCY} order by i.id`,
    discrepancyParams(d),
  );
  return rows.map((r) => r.id);
}
