import { BaseError, ContractFunctionRevertedError, ContractFunctionZeroDataError, type PublicClient } from "viem";
import { PriceFeed } from "../../contracts/artifacts.js";

/**
 * Chainlink's AggregatorV3Interface, as far as the service reads it (with the errors of the
 * project's own feed, contracts/PriceFeed.sol, so that its reverts are named).
 */
const aggregatorV3Abi = PriceFeed.abi.filter(
  (item) => item.type === "error" || (item.type === "function" && ["decimals", "description", "latestRoundData"].includes(item.name)),
);

/** A feed's latest round: one whole base unit is worth answer / 10^decimals whole quote units. */
export interface FeedReading {
  /** The feed's address, lowercase. */
  address: string;
  roundId: bigint;
  answer: bigint;
  decimals: number;
  updatedAt: Date;
  description?: string;
}

export type FeedErrorReason = "reverted" | "no_data" | "non_positive_answer" | "no_update_time" | "incomplete_round";

/** A feed that gave no usable price: it reverted, is no feed, or its latest round is not a price. */
export class FeedError extends Error {
  constructor(
    readonly reason: FeedErrorReason,
    message: string,
  ) {
    super(message);
    this.name = "FeedError";
  }
}

/** The latest seconds a JavaScript Date can hold. */
const MAX_DATE_SECONDS = 8_640_000_000_000n;

/**
 * Reads a price feed's latest round (two plain calls: decimals and latestRoundData; description
 * too, left out when the feed has none). Throws FeedError when a call reverts, when the address
 * answers nothing, and when the round is no usable price: an answer of 0 or less, no update time,
 * or a round answered in an earlier round (incomplete). Transport failures are thrown as viem's.
 */
export async function readPriceFeed(client: PublicClient, address: `0x${string}`): Promise<FeedReading> {
  const feed = address.toLowerCase() as `0x${string}`;
  const [decimals, round, description] = await Promise.all([
    client.readContract({ address: feed, abi: aggregatorV3Abi, functionName: "decimals" }).catch((e: unknown) => feedFailure(feed, e)),
    client.readContract({ address: feed, abi: aggregatorV3Abi, functionName: "latestRoundData" }).catch((e: unknown) => feedFailure(feed, e)),
    client.readContract({ address: feed, abi: aggregatorV3Abi, functionName: "description" }).catch(() => undefined),
  ]);
  const [roundId, answer, , updatedAt, answeredInRound] = round;
  if (answer <= 0n) throw new FeedError("non_positive_answer", `price feed ${feed} answered ${answer} in round ${roundId}: not a price`);
  if (updatedAt === 0n || updatedAt > MAX_DATE_SECONDS) {
    throw new FeedError("no_update_time", `price feed ${feed} has no usable update time (${updatedAt}) in round ${roundId}`);
  }
  if (answeredInRound < roundId) {
    throw new FeedError("incomplete_round", `price feed ${feed}: round ${roundId} is incomplete (answered in round ${answeredInRound})`);
  }
  return {
    address: feed,
    roundId,
    answer,
    decimals: Number(decimals),
    updatedAt: new Date(Number(updatedAt) * 1000),
    ...(description !== undefined ? { description } : {}),
  };
}

/** A failed read as a FeedError when the feed refused it; anything else (the node is down) as it is. */
function feedFailure(feed: string, e: unknown): never {
  if (e instanceof BaseError) {
    const zero = e.walk((x) => x instanceof ContractFunctionZeroDataError);
    if (zero) throw new FeedError("no_data", `price feed ${feed} answered nothing: no feed at this address? (${e.shortMessage})`);
    const reverted = e.walk((x) => x instanceof ContractFunctionRevertedError) as ContractFunctionRevertedError | null;
    if (reverted) {
      const why = revertReason(reverted);
      throw new FeedError("reverted", `price feed ${feed} reverted${why !== undefined ? `: ${why}` : " without a reason"} (${e.shortMessage})`);
    }
  }
  throw e;
}

/** The feed's own words: its custom error with arguments (`FeedBroken()`), a reason string, or the error's selector. */
function revertReason(e: ContractFunctionRevertedError): string | undefined {
  if (e.reason !== undefined && e.reason !== "execution reverted") return e.reason;
  if (e.data && e.data.errorName !== "Error" && e.data.errorName !== "Panic") {
    return `${e.data.errorName}(${(e.data.args ?? []).map(String).join(", ")})`;
  }
  return e.signature !== undefined ? `error ${e.signature}` : undefined;
}
