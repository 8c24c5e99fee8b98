import { LedgerError } from "./errors.js";

/** How an asset settles: an ERC-20 token on a chain, a chain's native token, or outside any chain. */
export type AssetSettlement = { kind: "erc20"; chainId: number; tokenAddress: string } | { kind: "native"; chainId: number } | { kind: "offchain" };

export interface Asset {
  id: string;
  code: string;
  scale: number;
  settlement: AssetSettlement;
  createdAt: Date;
  /** When it was retired (docs/api.md, "Changing and retiring"); null while in use. */
  retiredAt: Date | null;
  /** How old a rate into this asset may be, and how far apart two sources of it, for a conversion to use it (docs/settlement.md). */
  rateBounds: { maxAgeSeconds: number; maxDeviationBps: number };
}

/** A settlement in words, for problems and logs: "token 0xabc… on chain 31337". */
export function describeSettlement(s: AssetSettlement): string {
  if (s.kind === "erc20") return `token ${s.tokenAddress.toLowerCase()} on chain ${s.chainId}`;
  if (s.kind === "native") return `the native token of chain ${s.chainId}`;
  return "off-chain";
}

export function sameSettlement(a: AssetSettlement, b: AssetSettlement): boolean {
  return describeSettlement(a) === describeSettlement(b);
}

/**
 * Whether an asset may change from settling as `from` to settling as `to`. A chain's native asset
 * is found by its identity to book that chain's gas, so no asset becomes one or stops being one
 * (a chain's native token is registered once, as an asset of its own). Changing to what it is already is not a change.
 */
export function checkSettlementChange(code: string, from: AssetSettlement, to: AssetSettlement): void {
  if (from.kind === "native" || to.kind === "native") {
    const message =
      from.kind === "native"
        ? `asset ${code} is a chain's native token, in which the service books that chain's gas: its settlement cannot change (register another asset for the other settlement)`
        : `asset ${code} would become a chain's native token, in which the service books that chain's gas: a chain's native token is registered once, as an asset of its own (POST /v1/assets), not made by changing another asset`;
    throw new LedgerError("invalid_request", message, [{ path: "settlement", message }]);
  }
  if (sameSettlement(from, to)) {
    const message = `asset ${code} settles as ${describeSettlement(from)} already`;
    throw new LedgerError("invalid_request", message, [{ path: "settlement", message }]);
  }
}

/** Refuses new business in a retired asset (existing balances can still be read and paid out). */
export function refuseRetiredAsset(asset: Pick<Asset, "code" | "retiredAt">): void {
  if (asset.retiredAt !== null) throw assetRetired(asset.code, asset.retiredAt);
}

export function assetRetired(code: string, at: Date): LedgerError {
  return new LedgerError(
    "asset_retired",
    `asset ${code} was retired at ${at.toISOString()}: it takes no new accounts, transfers, usage, holds or deposits (its balances can still be read and paid out)`,
  );
}
