import {
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  encodeFunctionData,
  fallback,
  http,
  keccak256,
  parseEventLogs,
  parseTransaction,
  HttpRequestError,
  TimeoutError,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
} from "viem";
import { PayoutVault } from "../../contracts/artifacts.js";
import { bytes32ToPayoutId, payoutIdToBytes32 } from "../domain/payouts.js";
import type { ChainSettings } from "./config.js";

/** One payment of a batch. */
export interface BatchItem {
  payoutId: string;
  to: string;
  amount: bigint;
}

/** A call to the payout vault, ready to sign. */
export interface VaultCall {
  to: `0x${string}`;
  data: Hex;
  value: bigint;
}

export type Simulation =
  | { ok: true; gas: bigint }
  /** The vault named the item that cannot be paid (a recipient refusing the native token, a blocked address). */
  | { ok: false; failedIndex: number; reason: string }
  /** The call reverts for a reason that is not one item's (treasury short of funds, token paused). */
  | { ok: false; failedIndex?: undefined; reason: string };

export interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

export interface PaidEvent {
  payoutId: string;
  token: string;
  recipient: string;
  amount: bigint;
  logIndex: number;
}

export type BroadcastResult = "sent" | "known" | "nonce_used";

/**
 * The EVM settlement adapter: builds, simulates, signs and broadcasts batch payouts through the
 * payout vault with viem, and reads receipts and blocks back. It holds no state; what was signed
 * and sent is stored by the caller, so any process can pick up where another stopped.
 */
export class EvmChain {
  readonly client: PublicClient;

  constructor(readonly settings: ChainSettings) {
    this.client = createPublicClient({
      // No caching: confirmations and canonical-block checks need the head as it is now.
      cacheTime: 0,
      transport: fallback(settings.rpc_urls.map((url) => http(url, { timeout: settings.rpc_timeout_ms, retryCount: 1, retryDelay: 100 }))),
    }) as PublicClient;
  }

  get chainId(): bigint {
    return this.settings.chainId;
  }

  get sender(): `0x${string}` {
    return this.settings.signer.address.toLowerCase() as `0x${string}`;
  }

  /** The vault call paying these items: the native token when `token` is null, else that ERC-20. */
  batchCall(token: string | null, items: BatchItem[]): VaultCall {
    const ids = items.map((i) => payoutIdToBytes32(i.payoutId));
    const to = items.map((i) => i.to as `0x${string}`);
    const amounts = items.map((i) => i.amount);
    const data =
      token === null
        ? encodeFunctionData({ abi: PayoutVault.abi, functionName: "payNative", args: [ids, to, amounts] })
        : encodeFunctionData({ abi: PayoutVault.abi, functionName: "payToken", args: [token as `0x${string}`, ids, to, amounts] });
    return { to: this.settings.vault, data, value: 0n };
  }

  /** Runs the call against the head block as the signer would send it, and estimates its gas. */
  async simulate(call: VaultCall): Promise<Simulation> {
    try {
      const gas = await this.client.estimateGas({ account: this.sender, to: call.to, data: call.data, value: call.value });
      return { ok: true, gas };
    } catch (e) {
      const reverted = revertOf(e);
      if (!reverted) throw e;
      return reverted;
    }
  }

  async fees(): Promise<Fees> {
    const f = await this.client.estimateFeesPerGas();
    return { maxFeePerGas: f.maxFeePerGas, maxPriorityFeePerGas: f.maxPriorityFeePerGas };
  }

  /** Signs locally (no RPC). The same inputs always give the same bytes. */
  async sign(call: VaultCall, nonce: bigint, gas: bigint, fees: Fees): Promise<{ hash: Hex; raw: Hex }> {
    const raw = await this.settings.signer.signTransaction({
      type: "eip1559",
      chainId: Number(this.chainId),
      nonce: Number(nonce),
      to: call.to,
      data: call.data,
      value: call.value,
      gas,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
    return { hash: keccak256(raw), raw };
  }

  /**
   * Sends signed bytes. Sending the same bytes again is harmless: the node answers that it knows
   * them, or that the nonce is used (this or another attempt of the same transaction was mined).
   */
  async broadcast(raw: Hex): Promise<BroadcastResult> {
    try {
      await this.client.sendRawTransaction({ serializedTransaction: raw });
      return "sent";
    } catch (e) {
      // Node error texts differ (geth, Nethermind, Erigon, anvil …): ask the chain itself.
      if (await this.knows(keccak256(raw)).catch(() => false)) return "known";
      const { nonce } = parseTransaction(raw);
      const mined = await this.client.getTransactionCount({ address: this.sender, blockTag: "latest" }).then(BigInt, () => undefined);
      if (nonce !== undefined && mined !== undefined && mined > BigInt(nonce)) return "nonce_used";
      // Another transaction with this nonce is in the pool (an earlier attempt of the same call).
      if (/replacement transaction underpriced|already known|alreadyknown|known transaction/i.test(errorText(e))) return "known";
      throw e;
    }
  }

  async head(): Promise<bigint> {
    return this.client.getBlockNumber({ cacheTime: 0 });
  }

  async pendingNonce(): Promise<bigint> {
    return BigInt(await this.client.getTransactionCount({ address: this.sender, blockTag: "pending" }));
  }

  /** How many transactions of the signer are mined as of a block. */
  async nonceAt(blockNumber: bigint): Promise<bigint> {
    return BigInt(await this.client.getTransactionCount({ address: this.sender, blockNumber }));
  }

  async receipt(hash: Hex): Promise<TransactionReceipt | null> {
    try {
      return await this.client.getTransactionReceipt({ hash });
    } catch (e) {
      if (e instanceof TransactionReceiptNotFoundError) return null;
      throw e;
    }
  }

  /** Whether the node has the transaction (in its pool or in a block). */
  async knows(hash: Hex): Promise<boolean> {
    try {
      await this.client.getTransaction({ hash });
      return true;
    } catch (e) {
      if (e instanceof TransactionNotFoundError) return false;
      throw e;
    }
  }

  async blockHash(blockNumber: bigint): Promise<Hex | null> {
    try {
      return (await this.client.getBlock({ blockNumber })).hash;
    } catch (e) {
      if (e instanceof BaseError && /not found|could not be found/i.test(e.message)) return null;
      throw e;
    }
  }

  /**
   * Checks that the vault is deployed and owned by the signer, so that nothing is signed for an
   * address that would accept the call and pay nobody. Throws with the reason.
   */
  async checkVault(): Promise<void> {
    const code = await this.client.getCode({ address: this.settings.vault });
    if (!code || code === "0x") throw new Error(`chain ${this.settings.name}: no contract at vault ${this.settings.vault}`);
    const owner = await this.client.readContract({ address: this.settings.vault, abi: PayoutVault.abi, functionName: "owner" });
    if (owner.toLowerCase() !== this.sender)
      throw new Error(`chain ${this.settings.name}: vault ${this.settings.vault} is owned by ${owner}, not by the signer ${this.sender}`);
  }

  /** An ERC-20 token's decimals. */
  async tokenDecimals(token: string): Promise<number> {
    return Number(await this.client.readContract({ address: token as `0x${string}`, abi: erc20DecimalsAbi, functionName: "decimals" }));
  }

  /**
   * The vault's Paid events of one token (null: the native token) in [fromBlock, toBlock], read in
   * chunks of `log_chunk_blocks` (RPC nodes cap the range of eth_getLogs).
   */
  async paidLogs(token: string | null, fromBlock: bigint, toBlock: bigint): Promise<Array<PaidEvent & { txHash: Hex; blockNumber: bigint }>> {
    const out: Array<PaidEvent & { txHash: Hex; blockNumber: bigint }> = [];
    for (const [from, to] of chunks(fromBlock, toBlock, BigInt(this.settings.log_chunk_blocks))) {
      const logs = await this.client.getContractEvents({
        address: this.settings.vault,
        abi: PayoutVault.abi,
        eventName: "Paid",
        fromBlock: from,
        toBlock: to,
        args: { token: (token ?? ZERO_ADDRESS) as `0x${string}` },
      });
      for (const l of logs) {
        const payoutId = bytes32ToPayoutId(l.args.payoutId!) ?? l.args.payoutId!;
        out.push({
          payoutId,
          token: l.args.token!.toLowerCase(),
          recipient: l.args.recipient!.toLowerCase(),
          amount: l.args.amount!,
          logIndex: l.logIndex,
          txHash: l.transactionHash,
          blockNumber: l.blockNumber,
        });
      }
    }
    return out;
  }

  /** The vault's Paid events for these payout ids in [fromBlock, toBlock], chunked. */
  async paidEventsFor(payoutIds: string[], fromBlock: bigint, toBlock: bigint): Promise<Array<{ payoutId: string; txHash: Hex; blockNumber: bigint }>> {
    const out: Array<{ payoutId: string; txHash: Hex; blockNumber: bigint }> = [];
    if (payoutIds.length === 0 || fromBlock > toBlock) return out;
    for (const [from, to] of chunks(fromBlock, toBlock, BigInt(this.settings.log_chunk_blocks))) {
      const logs = await this.client.getContractEvents({
        address: this.settings.vault,
        abi: PayoutVault.abi,
        eventName: "Paid",
        fromBlock: from,
        toBlock: to,
        args: { payoutId: payoutIds.map((id) => payoutIdToBytes32(id)) },
      });
      for (const l of logs)
        out.push({ payoutId: bytes32ToPayoutId(l.args.payoutId!) ?? l.args.payoutId!, txHash: l.transactionHash, blockNumber: l.blockNumber });
    }
    return out;
  }

  /** ERC-20 Transfer events of a token into the vault in [fromBlock, toBlock], chunked. */
  async transfersIn(
    token: string,
    fromBlock: bigint,
    toBlock: bigint,
  ): Promise<Array<{ from: string; amount: bigint; txHash: Hex; logIndex: number; blockNumber: bigint }>> {
    const out: Array<{ from: string; amount: bigint; txHash: Hex; logIndex: number; blockNumber: bigint }> = [];
    for (const [from, to] of chunks(fromBlock, toBlock, BigInt(this.settings.log_chunk_blocks))) {
      const logs = await this.client.getContractEvents({
        address: token as `0x${string}`,
        abi: erc20TransferAbi,
        eventName: "Transfer",
        fromBlock: from,
        toBlock: to,
        args: { to: this.settings.vault },
      });
      for (const l of logs)
        out.push({ from: l.args.from!.toLowerCase(), amount: l.args.value!, txHash: l.transactionHash, logIndex: l.logIndex, blockNumber: l.blockNumber });
    }
    return out;
  }

  /** What the treasury holds on chain: the vault's balance plus the signer's (which pays gas). */
  async treasuryBalance(token: string | null): Promise<{ vault: bigint; signer: bigint }> {
    const of = (address: `0x${string}`) =>
      token === null
        ? this.client.getBalance({ address })
        : this.client.readContract({ address: token as `0x${string}`, abi: erc20BalanceAbi, functionName: "balanceOf", args: [address] });
    const [vault, signer] = await Promise.all([of(this.settings.vault), of(this.sender)]);
    return { vault, signer };
  }

  /** The vault's Paid events in a receipt. */
  paidEvents(receipt: TransactionReceipt): PaidEvent[] {
    const logs = receipt.logs.filter((l) => l.address.toLowerCase() === this.settings.vault);
    return parseEventLogs({ abi: PayoutVault.abi, logs, eventName: "Paid" }).flatMap((l) => {
      const payoutId = bytes32ToPayoutId(l.args.payoutId);
      if (payoutId === undefined) return [];
      return [{ payoutId, token: l.args.token.toLowerCase(), recipient: l.args.recipient.toLowerCase(), amount: l.args.amount, logIndex: l.logIndex }];
    });
  }
}

/** The token address the vault's Paid events carry for the native token. */
export const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";

/** [from, to] cut into ranges of at most `size` blocks. */
export function chunks(from: bigint, to: bigint, size: bigint): Array<[bigint, bigint]> {
  const out: Array<[bigint, bigint]> = [];
  for (let f = from; f <= to; f += size) out.push([f, f + size - 1n < to ? f + size - 1n : to]);
  return out;
}

const erc20TransferAbi = [
  {
    type: "event",
    name: "Transfer",
    anonymous: false,
    inputs: [
      { name: "from", type: "address", indexed: true },
      { name: "to", type: "address", indexed: true },
      { name: "value", type: "uint256", indexed: false },
    ],
  },
] as const;
const erc20BalanceAbi = [
  { type: "function", name: "balanceOf", stateMutability: "view", inputs: [{ name: "", type: "address" }], outputs: [{ name: "", type: "uint256" }] },
] as const;
const erc20DecimalsAbi = [{ type: "function", name: "decimals", stateMutability: "view", inputs: [], outputs: [{ name: "", type: "uint8" }] }] as const;

/**
 * viem's transport failures: the node is down or too slow. Not its refusals (JSON-RPC errors such
 * as "insufficient funds" or a revert), which concern one request, not the node.
 */
export function isRpcUnavailable(err: unknown): boolean {
  return err instanceof BaseError && err.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError) !== null;
}

function errorText(e: unknown): string {
  if (e instanceof BaseError) return `${e.shortMessage} ${e.details ?? ""} ${e.message}`;
  return String(e);
}

/** The revert inside a viem error, decoded with the vault's errors; undefined when it is not a revert. */
function revertOf(e: unknown): Simulation | undefined {
  if (!(e instanceof BaseError)) return undefined;
  const raw = e.walk((x) => typeof (x as { data?: unknown }).data === "string" && /^0x[0-9a-f]*$/i.test((x as { data: string }).data));
  const data = (raw as { data?: Hex } | null)?.data;
  if (data && data.length >= 10) {
    try {
      const decoded = new ContractFunctionRevertedError({ abi: PayoutVault.abi, data, functionName: "payNative" });
      if (decoded.data?.errorName === "PaymentFailed") {
        return {
          ok: false,
          failedIndex: Number(decoded.data.args?.[0] as bigint),
          reason: "the vault could not pay this item (recipient refused it, or the token refused the transfer)",
        };
      }
      return { ok: false, reason: decoded.reason ?? decoded.data?.errorName ?? decoded.shortMessage };
    } catch {
      return { ok: false, reason: e.shortMessage };
    }
  }
  if (/revert|execution reverted/i.test(errorText(e))) return { ok: false, reason: e.shortMessage };
  return undefined;
}
