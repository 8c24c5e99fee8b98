import type { Settlements } from "../chain/settlement.js";
import type { Database } from "../db/client.js";
import { batchedPayoutTotal, chainTxAttemptHashes, payoutsInFlight, pendingPayoutTotals, treasuryAccountTotals } from "../db/queries/reconciliations.js";
import { chart } from "../domain/chart.js";
import { assetOrThrow, evmRoute } from "./evm-route.js";

/**
 * The treasury on chain (vault + signer) against its ledger account, with what is in flight:
 * payouts signed or submitted but not confirmed, and how much of them the chain already shows
 * mined (left the vault, and for the native token, gas the signer spent). What remains is
 * unexplained: funding or outflows the ledger has not recorded.
 */
export async function treasuryCheck(db: Database, settlements: Settlements, chainId: bigint, assetCode: string) {
  const asset = await assetOrThrow(db, assetCode);
  const { chain, token } = evmRoute(settlements, asset, chainId);
  const route = chainId.toString();
  const onChain = await chain.treasuryBalance(token);
  const acct = await treasuryAccountTotals(db, asset.id, chart.treasury(asset.id, route).ref);
  const ledger = acct ? BigInt(acct.d) - BigInt(acct.c) : 0n;
  const flying = await payoutsInFlight(db, route, asset.id);
  let minedAmount = 0n;
  let minedGas = 0n;
  for (const f of flying) {
    const hashes = await chainTxAttemptHashes(db, f.chain_tx_id);
    for (const h of hashes) {
      const r = await chain.receipt(h.hash);
      if (!r) continue;
      if (r.status === "success") minedAmount += BigInt(f.amount);
      if (token === null) minedGas += r.gasUsed * r.effectiveGasPrice;
      break;
    }
  }
  const total = onChain.vault + onChain.signer;
  const expected = ledger - minedAmount - minedGas;
  // Payouts not yet batched, against what the vault can pay once the ones in flight have left it.
  const queued = await pendingPayoutTotals(db, route, asset.id);
  const batched = await batchedPayoutTotal(db, route, asset.id);
  const inFlightAmount = flying.reduce((n, f) => n + BigInt(f.amount), 0n);
  const stillToLeave = BigInt(batched!.amount) + inFlightAmount - minedAmount;
  const shortfall = BigInt(queued!.amount) + stillToLeave - onChain.vault;
  return {
    chainId,
    asset: asset.code,
    scale: asset.scale,
    onChain: { vault: onChain.vault, signer: onChain.signer, total },
    ledger,
    inFlight: {
      payouts: flying.reduce((n, f) => n + Number(f.payouts), 0),
      amount: flying.reduce((n, f) => n + BigInt(f.amount), 0n),
      minedAmount,
      minedGas,
    },
    expectedOnChain: expected,
    unexplained: total - expected,
    pending: { payouts: Number(queued!.payouts), amount: BigInt(queued!.amount), shortfall: shortfall > 0n ? shortfall : 0n },
  };
}
