import { isAddress } from "viem";
import type { Asset } from "../domain/assets.js";
import { LedgerError } from "../domain/errors.js";
import type { ChainSettings } from "./config.js";
import { EvmChain } from "./evm.js";

/**
 * How an asset's payouts reach the operator. `evm`: the worker pays them through the chain's
 * payout vault. `none`: off-chain settlement, where finance pays by other means and marks the
 * payout paid with an external reference. An asset that settles on a chain this service has no
 * settings for cannot be paid out (`unconfigured`).
 */
export type Settlement = { kind: "evm"; chain: EvmChain; token: string | null } | { kind: "none" } | { kind: "unconfigured"; chainId: number; reason?: string };

/** The settlement adapters of this process, one EVM adapter per configured chain. */
export class Settlements {
  readonly chains: EvmChain[];

  constructor(settings: ChainSettings[]) {
    this.chains = settings.map((s) => new EvmChain(s));
  }

  chain(chainId: bigint | number): EvmChain | undefined {
    return this.chains.find((c) => c.chainId === BigInt(chainId));
  }

  /** Refuses a chain this service does not pay on, or a malformed address (for addresses to register). */
  requireAddressOn(chainId: bigint, address: string): void {
    if (!this.chain(chainId)) {
      throw new LedgerError("chain_not_configured", `chain ${chainId} is not configured on this service`, [
        { path: "chainId", message: "is not a configured chain" },
      ]);
    }
    if (!isAddress(address, { strict: false }))
      throw new LedgerError("invalid_request", "address is not a 20-byte hex address", [{ path: "address", message: "invalid" }]);
  }

  forAsset(asset: Asset): Settlement {
    const s = asset.settlement;
    if (s.kind === "offchain") return { kind: "none" };
    const chain = this.chain(s.chainId);
    if (!chain) return { kind: "unconfigured", chainId: s.chainId };
    return settlesOn(chain, asset);
  }
}

/**
 * Whether an asset settles on this chain as its settings say: the asset is on this chain and, when
 * the settings list the chain's assets, it is one of them with the same token and scale. What the
 * payouts pay, and the deposits the scanner credits (only these), follow this one answer.
 */
export function settlesOn(chain: EvmChain, asset: Asset): Extract<Settlement, { kind: "evm" | "unconfigured" }> {
  const s = asset.settlement;
  if (s.kind === "offchain" || BigInt(s.chainId) !== chain.chainId)
    return { kind: "unconfigured", chainId: Number(chain.chainId), reason: `asset ${asset.code} does not settle on chain ${chain.chainId}` };
  const token = s.kind === "erc20" ? s.tokenAddress.toLowerCase() : null;
  const listed = chain.settings.assets;
  if (listed !== undefined) {
    // The chain's settings name what settles there: the ledger asset must be one of them, exactly.
    const entry = listed.find((a) => a.code === asset.code);
    if (!entry)
      return { kind: "unconfigured", chainId: s.chainId, reason: `asset ${asset.code} is not among the assets chain ${s.chainId} is configured to settle` };
    if ((entry.token?.toLowerCase() ?? null) !== token || entry.decimals !== asset.scale) {
      return {
        kind: "unconfigured",
        chainId: s.chainId,
        reason:
          `asset ${asset.code} (token ${token ?? "native"}, scale ${asset.scale}) differs from the chain's settings (token ${entry.token?.toLowerCase() ?? "native"}, ${entry.decimals} decimals)` +
          (entry.decimals === asset.scale && entry.token !== undefined && token !== null
            ? `: if the token was redeployed, propose it as the asset's token (PATCH /v1/assets/${asset.code}) for another key to approve`
            : ""),
      };
    }
  }
  return { kind: "evm", chain, token };
}
