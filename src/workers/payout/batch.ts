import { isRpcUnavailable, type BatchItem, type EvmChain } from "../../chain/evm.js";
import { getAsset } from "../../db/queries/assets.js";
import { insertBatchedChainTx } from "../../db/queries/chain-transactions.js";
import { listPayoutsToBatch, lockPayoutsToBatch, markPayoutsBatched, notePendingPayouts, type PendingPayoutRow } from "../../db/queries/payout-batches.js";
import { recordPayoutEvents } from "../../db/queries/payouts.js";
import { owedByOperators } from "../../db/queries/receivables.js";
import type { Asset } from "../../domain/assets.js";
import { uuidv7 } from "../../domain/ids.js";
import { unitsToDecimal } from "../../domain/money.js";
import { gasCostInAsset, withinGasCap } from "../../domain/payouts.js";
import { failPayouts } from "../../services/fail-payouts.js";
import { getPayoutPolicy, type PayoutPolicy } from "../../services/payout-policies.js";
import { inTransaction } from "../../services/transaction.js";
import { tokenOf, vaultRoom, type PayoutContext } from "./context.js";

/** Step 1: group pending payouts into batches, leaving out what cannot be paid now. */
export async function batchPending(ctx: PayoutContext, chain: EvmChain): Promise<void> {
  // Per asset, so that payouts of one asset held back (gas cap, vault short of it) never keep
  // another asset's from being paid.
  const pending = await waitWhileOwing(ctx, await listPayoutsToBatch(ctx.db, chain.chainId, chain.settings.max_batch_size * 10));
  const byAsset = new Map<string, typeof pending>();
  for (const p of pending) byAsset.set(p.asset_id, [...(byAsset.get(p.asset_id) ?? []), p]);
  if (byAsset.size > 0) await checkChain(ctx, chain);
  let firstError: unknown;
  for (const [assetId, rows] of byAsset) {
    try {
      await batchAsset(ctx, chain, assetId, rows);
    } catch (err) {
      // One asset's trouble (a token that reverts, its vault balance) must not hold up the others.
      firstError ??= err;
      if (isRpcUnavailable(err)) break;
    }
  }
  if (firstError !== undefined) throw firstError;
}

/**
 * Leaves out the payouts of operators that owe the platform (a receivable in any asset, from a
 * clawback written after they were asked for: new payouts are refused then, docs/ledger.md): they
 * wait, with a note, until the debt is paid back by new earnings, or are cancelled, which returns
 * their hold to the payable that pays the debt back first.
 */
async function waitWhileOwing(ctx: PayoutContext, rows: PendingPayoutRow[]): Promise<PendingPayoutRow[]> {
  const owing = new Map<string, string>();
  for (const o of await owedByOperators(ctx.db, [...new Set(rows.map((r) => r.operator_id))])) {
    const what = `${unitsToDecimal(BigInt(o.owed), o.scale)} ${o.code}`;
    owing.set(o.operator_id, owing.has(o.operator_id) ? `${owing.get(o.operator_id)} and ${what}` : what);
  }
  for (const [operatorId, what] of owing) {
    await note(
      ctx,
      rows.filter((r) => r.operator_id === operatorId).map((r) => r.id),
      `waiting: operator ${operatorId} owes ${what} to the platform (a clawback); nothing is paid while it owes — cancel the payout to let its amount pay the debt back`,
    );
  }
  return rows.filter((r) => !owing.has(r.operator_id));
}

async function batchAsset(ctx: PayoutContext, chain: EvmChain, assetId: string, rows: PendingPayoutRow[]): Promise<void> {
  const asset = (await getAsset(ctx.db, assetId))!;
  const mismatch = await decimalsMismatch(ctx, chain, asset);
  if (mismatch) {
    await note(
      ctx,
      rows.map((r) => r.id),
      `waiting: ${mismatch}`,
    );
    ctx.log.error({ worker: "payouts", chain: chain.settings.name, asset: asset.code }, mismatch);
    return;
  }
  // A vault short of the asset is not a reason to fail a payout: what it cannot cover waits, in
  // the order the payouts were asked for, and is batched once the vault is funded.
  // First fit, oldest first: a payout larger than what is left waits without holding back the
  // smaller ones behind it.
  const room = await vaultRoom(ctx, chain, asset);
  let left = room;
  const fits: typeof rows = [];
  const waiting: typeof rows = [];
  for (const r of rows) {
    if (BigInt(r.amount) <= left) {
      fits.push(r);
      left -= BigInt(r.amount);
    } else waiting.push(r);
  }
  if (waiting.length > 0) {
    await note(
      ctx,
      waiting.map((r) => r.id),
      `waiting for funds: the vault can pay ${room} ${asset.code} on chain ${chain.chainId} after the payouts in flight, not this one too; it is paid once the vault is funded`,
    );
    ctx.log.warn(
      { worker: "payouts", chain: chain.settings.name, asset: asset.code, waiting: waiting.length, available: room.toString() },
      "vault short: payouts wait for funds",
    );
    rows = fits;
  }
  const policy = await getPayoutPolicy(ctx.db, assetId);
  for (let i = 0; i < rows.length; i += chain.settings.max_batch_size) {
    const items = await fitBatch(
      ctx,
      chain,
      asset,
      policy,
      rows.slice(i, i + chain.settings.max_batch_size).map((r) => ({ payoutId: r.id, to: r.to_address, amount: BigInt(r.amount) })),
    );
    if (items.length === 0) continue;
    await createBatch(ctx, chain, assetId, items);
  }
}

/**
 * Simulates a batch until it would pay (at most 8 rounds): an item the vault names as unpayable
 * fails and is left out, items the gas cap holds back wait; nothing is left when the vault is
 * short or the batch would revert for another reason.
 */
async function fitBatch(ctx: PayoutContext, chain: EvmChain, asset: Asset, policy: PayoutPolicy, items: BatchItem[]): Promise<BatchItem[]> {
  for (let round = 0; items.length > 0 && round < 8; round++) {
    const sim = await chain.simulate(chain.batchCall(tokenOf(asset), items));
    if (!sim.ok && sim.failedIndex !== undefined && items[sim.failedIndex]) {
      if ((await vaultRoom(ctx, chain, asset)) < items.reduce((n, x) => n + x.amount, 0n)) {
        // The vault went short since it was read: wait, fail nobody.
        await note(
          ctx,
          items.map((x) => x.payoutId),
          `waiting for funds: the vault can no longer pay this batch of ${asset.code} on chain ${chain.chainId}; it is paid once the vault is funded`,
        );
        items = [];
        break;
      }
      const bad = items[sim.failedIndex]!;
      await failPayouts(ctx.db, { ids: [bad.payoutId], reason: `cannot be paid: ${sim.reason}`, from: ["pending"] });
      ctx.log.warn({ worker: "payouts", payout: bad.payoutId, reason: sim.reason }, "payout failed in simulation; left out of the batch");
      items = items.filter((x) => x !== bad);
      continue;
    }
    if (!sim.ok) {
      await note(
        ctx,
        items.map((x) => x.payoutId),
        `waiting: the batch would revert (${sim.reason})`,
      );
      ctx.log.warn({ worker: "payouts", chain: chain.settings.name, asset: asset.code, reason: sim.reason }, "batch would revert; payouts wait");
      items = [];
      break;
    }
    if (policy.maxGasShareBps === null) break;
    const fees = await chain.fees();
    const perItem = (sim.gas * fees.maxFeePerGas + BigInt(items.length) - 1n) / BigInt(items.length);
    const price = chain.settings.nativePrices.get(asset.code);
    const token = tokenOf(asset);
    const share = token === null ? perItem : price ? gasCostInAsset(perItem, chain.settings.native_asset.decimals, asset.scale, price) : null;
    if (share === null) break; // no price to compare with: the cap cannot be applied (docs/payouts.md)
    const over = items.filter((x) => !withinGasCap(x.amount, share, policy.maxGasShareBps));
    if (over.length === 0) break;
    await note(
      ctx,
      over.map((x) => x.payoutId),
      `waiting: gas (${share} per payout) is above the policy's ${policy.maxGasShareBps} bps cap`,
    );
    items = items.filter((x) => !over.includes(x));
  }
  return items;
}

/** Claims those of the items still pending (skipping rows another worker holds) into a new batched chain transaction. */
async function createBatch(ctx: PayoutContext, chain: EvmChain, assetId: string, items: BatchItem[]): Promise<void> {
  const batchId = await inTransaction(ctx.db, async (tx) => {
    const ids = await lockPayoutsToBatch(
      tx,
      items.map((x) => x.payoutId),
    );
    if (ids.length === 0) return null;
    const id = uuidv7();
    await insertBatchedChainTx(tx, id, chain.chainId, assetId, chain.sender);
    await markPayoutsBatched(tx, ids, id);
    await recordPayoutEvents(tx, ids, "batched", ctx.now(), { chain_tx_id: id });
    return id;
  });
  if (batchId) ctx.fault("after_batch");
}

async function checkChain(ctx: PayoutContext, chain: EvmChain): Promise<void> {
  const key = `vault:${chain.chainId}`;
  if (ctx.checked.has(key)) return;
  await chain.checkVault();
  ctx.checked.add(key);
}

/**
 * Ledger amounts are paid as on-chain units as they are: the asset's scale must be the token's
 * decimals (or the native token's), else nothing of it is paid.
 */
async function decimalsMismatch(ctx: PayoutContext, chain: EvmChain, asset: Asset): Promise<string | undefined> {
  const key = `asset:${asset.id}`;
  if (ctx.checked.has(key)) return undefined;
  const token = tokenOf(asset);
  const decimals = token === null ? chain.settings.native_asset.decimals : await chain.tokenDecimals(token);
  if (decimals !== asset.scale)
    return `asset ${asset.code} has scale ${asset.scale} but its ${token === null ? "native token" : `token ${token}`} has ${decimals} decimals`;
  ctx.checked.add(key);
  return undefined;
}

async function note(ctx: PayoutContext, ids: string[], note: string): Promise<void> {
  await notePendingPayouts(ctx.db, ids, note);
}
