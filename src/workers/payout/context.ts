import type { EvmChain } from "../../chain/evm.js";
import type { Settlements } from "../../chain/settlement.js";
import type { Database, Queryable } from "../../db/client.js";
import type { ChainTxRow } from "../../db/queries/chain-transactions.js";
import { sumPayoutsInFlight, requeuePayouts } from "../../db/queries/payout-batches.js";
import { recordPayoutEvents } from "../../db/queries/payouts.js";
import type { Asset } from "../../domain/assets.js";
import type { FaultPoint } from "../../domain/payouts.js";
import type { Logger } from "../../log.js";

/** What every step of the payout worker works with: the worker's handles and its per-process caches. */
export interface PayoutContext {
  readonly db: Database;
  readonly settlements: Settlements;
  readonly log: Logger;
  /** Called at each fault point. */
  readonly fault: (point: FaultPoint) => void;
  /** The service's clock: payout schedules' windows and the instants of payout events. */
  readonly now: () => Date;
  /** Each chain's native asset, once read or created. */
  readonly nativeAssets: Map<bigint, Asset>;
  /** Chains whose vault was checked, and assets whose on-chain decimals match their scale. */
  readonly checked: Set<string>;
}

export type BatchRow = ChainTxRow;

/** A transaction receipt as the chain adapter returns it. */
export type Receipt = NonNullable<Awaited<ReturnType<EvmChain["receipt"]>>>;

export function tokenOf(asset: Asset): string | null {
  return asset.settlement.kind === "erc20" ? asset.settlement.tokenAddress.toLowerCase() : null;
}

export function errorSummary(err: unknown): string {
  if (err && typeof err === "object" && "shortMessage" in err) return String((err as { shortMessage: string }).shortMessage);
  return err instanceof Error ? err.message : String(err);
}

/**
 * What the vault can still pay of an asset: its balance on chain less the payouts already batched,
 * signed or submitted (a submitted one that is mined is counted twice until it is confirmed, so
 * this errs on the side of waiting).
 */
export async function vaultRoom(ctx: PayoutContext, chain: EvmChain, asset: Asset, exceptChainTx?: string): Promise<bigint> {
  const { vault } = await chain.treasuryBalance(tokenOf(asset));
  const room = vault - (await sumPayoutsInFlight(ctx.db, chain.chainId, asset.id, exceptChainTx));
  return room > 0n ? room : 0n;
}

/** Sends a chain transaction's payouts in one of `from` back to pending, with an event each. */
export async function requeue(ctx: PayoutContext, tx: Queryable, chainTxId: string, from: string[], countAttempt: boolean, reason?: string): Promise<void> {
  const ids = await requeuePayouts(tx, chainTxId, from, countAttempt);
  await recordPayoutEvents(tx, ids, "pending", ctx.now(), { requeued_from: chainTxId, reason: reason ?? "batch isolated a bad item" });
}
