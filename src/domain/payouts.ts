/**
 * Payout rules with no I/O: the state machine, the gas cap, fee bumps for replacements, and the
 * encodings shared with the payout vault contract.
 */

/** `converted`: a convert payout whose amount was converted; the payouts of its parts pay it. */
export const payoutStatuses = ["pending", "batched", "signed", "submitted", "confirmed", "failed", "converted"] as const;
export type PayoutStatus = (typeof payoutStatuses)[number];

/** Times a payout may ride a chain transaction that ends without paying before it fails for good. */
export const MAX_UNPAID_ATTEMPTS = 3;

/** A payout id (uuid) as the vault's bytes32: the 16 bytes left-aligned, zero-padded. */
export function payoutIdToBytes32(id: string): `0x${string}` {
  const hex = id.replaceAll("-", "").toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(hex)) throw new Error(`not a uuid: ${id}`);
  return `0x${hex}${"0".repeat(32)}`;
}

export function bytes32ToPayoutId(b: string): string | undefined {
  const m = /^0x([0-9a-f]{32})0{32}$/i.exec(b);
  if (!m) return undefined;
  const h = m[1]!.toLowerCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** An exact positive decimal ("3000", "0.25") as a fraction. */
export function parseFraction(s: string): { num: bigint; den: bigint } {
  const m = /^(\d{1,30})(?:\.(\d{1,30}))?$/.exec(s);
  if (!m) throw new Error(`not a decimal: ${s}`);
  const frac = m[2] ?? "";
  return { num: BigInt(m[1]! + frac), den: 10n ** BigInt(frac.length) };
}

/**
 * What a gas cost (in the native token's smallest units) is worth in an asset's smallest units,
 * rounded up, given the price of one whole native token in whole asset units.
 */
export function gasCostInAsset(gasWei: bigint, nativeDecimals: number, assetDecimals: number, nativePrice: { num: bigint; den: bigint }): bigint {
  const num = gasWei * nativePrice.num * 10n ** BigInt(assetDecimals);
  const den = nativePrice.den * 10n ** BigInt(nativeDecimals);
  return (num + den - 1n) / den;
}

/** Whether a payout may carry its share of gas: share ≤ amount × bps / 10,000 (no cap when bps is null). */
export function withinGasCap(amount: bigint, gasShare: bigint, maxGasShareBps: number | null): boolean {
  if (maxGasShareBps === null) return true;
  return gasShare * 10_000n <= amount * BigInt(maxGasShareBps);
}

/**
 * Fees of a replacement transaction: nodes accept one only if both fees rise by at least 10%
 * (12.5% on some), so each bump is +25%, and never below what the network asks now.
 */
export function bumpFees(
  previous: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint },
  current: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint },
): { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } {
  const up = (v: bigint) => (v * 125n + 99n) / 100n + 1n;
  const maxPriorityFeePerGas = max(up(previous.maxPriorityFeePerGas), current.maxPriorityFeePerGas);
  const maxFeePerGas = max(up(previous.maxFeePerGas), current.maxFeePerGas, maxPriorityFeePerGas);
  return { maxFeePerGas, maxPriorityFeePerGas };
}

const max = (...v: bigint[]) => v.reduce((a, b) => (a > b ? a : b));

/** The scheduling window a moment falls in, for a policy paying every `intervalSeconds`. */
export function scheduleWindow(now: Date, intervalSeconds: number): number {
  return Math.floor(now.getTime() / 1000 / intervalSeconds);
}

/** The text an operator signs (EIP-191 personal message) to prove it controls a payout address. */
export function addressChallengeMessage(c: { operatorId: string; chainId: bigint; address: string; challengeId: string; expiresAt: Date }): string {
  return [
    "Settlement ledger: verify payout address",
    `Operator: ${c.operatorId}`,
    `Chain: ${c.chainId}`,
    `Address: ${c.address}`,
    `Challenge: ${c.challengeId}`,
    `Expires: ${c.expiresAt.toISOString()}`,
  ].join("\n");
}

/**
 * The text a customer signs with an address to register it for deposits. It names everything it
 * binds, so it needs no challenge: replaying it can only register the same binding again.
 */
export function depositAddressMessage(c: { marketplaceId: string; customerId: string; chainId: bigint; address: string }): string {
  return [
    "Settlement ledger: register deposit address",
    `Marketplace: ${c.marketplaceId}`,
    `Customer: ${c.customerId}`,
    `Chain: ${c.chainId}`,
    `Address: ${c.address}`,
  ].join("\n");
}

/** Where a test may stop the payout worker dead (FAULT_KILL_AT), one point per step of the payout lifecycle. */
export const faultPoints = ["after_batch", "after_sign", "after_broadcast", "before_settle", "after_settle"] as const;

export type FaultPoint = (typeof faultPoints)[number];
