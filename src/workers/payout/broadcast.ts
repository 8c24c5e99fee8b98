import type { Hex } from "viem";
import type { EvmChain } from "../../chain/evm.js";
import {
  type AttemptRow,
  getLatestAttempt,
  listSignedChainTxs,
  lockChainTxStatus,
  markChainTxSubmitted,
  recordBroadcast,
  recordChainTxError,
  recordFirstBroadcast,
  recordReplacementAttempt,
} from "../../db/queries/chain-transactions.js";
import { listPayoutIdsOfChainTxIn, markPayoutsSubmitted } from "../../db/queries/payout-batches.js";
import { recordPayoutEvents } from "../../db/queries/payouts.js";
import { bumpFees } from "../../domain/payouts.js";
import { inTransaction } from "../../services/transaction.js";
import { errorSummary, type BatchRow, type PayoutContext } from "./context.js";

/**
 * Step 3: broadcast signed transactions, in nonce order. A transaction the node keeps refusing
 * (fees below what it now accepts) is replaced under the same nonce once `replace_after_seconds`
 * have passed; the rest go on (a later nonce waits in the node's pool, harmlessly).
 */
export async function broadcastSigned(ctx: PayoutContext, chain: EvmChain): Promise<void> {
  const batches = await listSignedChainTxs(ctx.db, chain.chainId, chain.sender);
  let firstError: unknown;
  for (const b of batches) {
    let a = await getLatestAttempt(ctx.db, b.id);
    try {
      await chain.broadcast(a.raw);
    } catch (err) {
      await recordChainTxError(ctx.db, b.id, `broadcast: ${errorSummary(err)}`);
      if (BigInt(a.waited_ms) < BigInt(chain.settings.replace_after_seconds) * 1000n) {
        firstError ??= err;
        continue;
      }
      const replaced = await replace(ctx, chain, b, a, ["signed"]).catch((e: unknown) => {
        firstError ??= e;
        return undefined;
      });
      if (!replaced) {
        firstError ??= err;
        continue;
      }
      a = replaced;
    }
    ctx.fault("after_broadcast");
    await inTransaction(ctx.db, async (tx) => {
      await recordFirstBroadcast(tx, a.hash);
      if (!(await markChainTxSubmitted(tx, b.id))) return;
      const ids = await markPayoutsSubmitted(tx, b.id);
      await recordPayoutEvents(tx, ids, "submitted", ctx.now(), { tx_hash: a.hash });
    });
  }
  if (firstError !== undefined) throw firstError;
}

/**
 * A stuck or refused transaction: the same call under the same nonce, with fees raised (never a
 * new payload: only one of the attempts can ever be mined). Returns the new attempt, stored
 * before it is broadcast.
 */
export async function replace(ctx: PayoutContext, chain: EvmChain, b: BatchRow, latest: AttemptRow, statuses: string[]): Promise<AttemptRow | undefined> {
  const previous = { maxFeePerGas: BigInt(latest.max_fee_per_gas), maxPriorityFeePerGas: BigInt(latest.max_priority_fee_per_gas) };
  const current = await chain.fees();
  // An attempt the node never accepted needs no outbidding: re-sign it only when the network now
  // asks for more than it offered (the refusal may have nothing to do with fees, e.g. no gas).
  if (!latest.accepted && current.maxFeePerGas <= previous.maxFeePerGas && current.maxPriorityFeePerGas <= previous.maxPriorityFeePerGas) return undefined;
  const fees = latest.accepted ? bumpFees(previous, current) : bumpFees(current, current);
  const cap = chain.settings.max_fee_per_gas_gwei === undefined ? undefined : BigInt(Math.floor(chain.settings.max_fee_per_gas_gwei * 1e9));
  if (cap !== undefined && fees.maxFeePerGas > cap) {
    if (previous.maxFeePerGas >= cap) {
      await recordChainTxError(ctx.db, b.id, `fees reached max_fee_per_gas_gwei (${chain.settings.max_fee_per_gas_gwei}); not replaced`);
      return undefined;
    }
    fees.maxFeePerGas = cap;
    if (fees.maxPriorityFeePerGas > cap) fees.maxPriorityFeePerGas = cap;
  }
  const call = { to: b.to_address as `0x${string}`, data: b.data as Hex, value: BigInt(b.value!) };
  const { hash, raw } = await chain.sign(call, BigInt(b.nonce!), BigInt(b.gas_limit!), fees);
  const stored = await inTransaction(ctx.db, async (tx) => {
    if (!statuses.includes((await lockChainTxStatus(tx, b.id)) ?? "") || (await getLatestAttempt(tx, b.id)).attempt !== latest.attempt) return false;
    await recordReplacementAttempt(tx, b.id, latest.attempt + 1, hash, raw, fees);
    const ids = await listPayoutIdsOfChainTxIn(tx, b.id, statuses);
    await recordPayoutEvents(tx, ids, statuses[0] as "signed" | "submitted", ctx.now(), { tx_hash: hash, replaces: latest.hash, attempt: latest.attempt + 1 });
    return true;
  });
  if (!stored) return undefined;
  await chain.broadcast(raw);
  await recordBroadcast(ctx.db, hash);
  ctx.log.info(
    { worker: "payouts", chain_tx: b.id, tx_hash: hash, replaces: latest.hash, max_fee_per_gas: fees.maxFeePerGas.toString() },
    "replaced a stuck transaction",
  );
  return getLatestAttempt(ctx.db, b.id);
}
