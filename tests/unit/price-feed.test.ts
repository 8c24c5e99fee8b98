import type { PublicClient } from "viem";
import { describe, expect, it } from "vitest";
import { FeedError, readPriceFeed } from "../../src/chain/price-feed.js";

const FEED = `0x${"Ab".repeat(20)}` as `0x${string}`;
type Round = [bigint, bigint, bigint, bigint, bigint];

/** A client answering the feed's calls from memory, as a node would. */
const clientAnswering = (round: Round, description?: string) =>
  ({
    readContract: async ({ functionName }: { functionName: string }) => {
      if (functionName === "decimals") return 8;
      if (functionName === "latestRoundData") return round;
      if (functionName === "description" && description !== undefined) return description;
      throw new Error(`unexpected call ${functionName}`);
    },
  }) as unknown as PublicClient;

const failure = (round: Round) =>
  readPriceFeed(clientAnswering(round), FEED).then(
    () => expect.fail("the feed was read"),
    (e: unknown) => e as FeedError,
  );

describe("reading a price feed's latest round", () => {
  it("gives the round as a reading, the address lowercase; the description when the feed has one", async () => {
    expect(await readPriceFeed(clientAnswering([7n, 250_000_000n, 100n, 1_700_000_000n, 7n], "NET / USD"), FEED)).toEqual({
      address: FEED.toLowerCase(),
      roundId: 7n,
      answer: 250_000_000n,
      decimals: 8,
      updatedAt: new Date(1_700_000_000_000),
      description: "NET / USD",
    });
    expect(await readPriceFeed(clientAnswering([7n, 1n, 100n, 1_700_000_000n, 7n]), FEED)).not.toHaveProperty("description");
  });

  it("refuses a round answered in an earlier round (incomplete)", async () => {
    const e = await failure([8n, 250_000_000n, 100n, 1_700_000_000n, 7n]);
    expect(e).toBeInstanceOf(FeedError);
    expect(e).toMatchObject({ reason: "incomplete_round", message: `price feed ${FEED.toLowerCase()}: round 8 is incomplete (answered in round 7)` });
  });

  it("refuses a round without an update time, or with one no date can hold", async () => {
    expect(await failure([8n, 250_000_000n, 0n, 0n, 8n])).toMatchObject({ reason: "no_update_time" });
    expect(await failure([8n, 250_000_000n, 0n, 2n ** 255n, 8n])).toMatchObject({ reason: "no_update_time" });
  });

  it("refuses an answer of 0 or less", async () => {
    expect(await failure([8n, 0n, 1n, 1n, 8n])).toMatchObject({ reason: "non_positive_answer" });
    expect(await failure([8n, -1n, 1n, 1n, 8n])).toMatchObject({ reason: "non_positive_answer" });
  });

  it("passes a failure of the node itself through as it is", async () => {
    const down = { readContract: () => Promise.reject(new Error("connect ECONNREFUSED")) } as unknown as PublicClient;
    await expect(readPriceFeed(down, FEED)).rejects.toThrow(/ECONNREFUSED/);
    await expect(readPriceFeed(down, FEED)).rejects.not.toBeInstanceOf(FeedError);
  });
});
