import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { parseEther } from "viem";
import { PriceFeed } from "../../contracts/artifacts.js";
import { deployPriceFeed, setPriceFeedBroken, startLocalChain, updatePriceFeed, type LocalChain } from "../../scripts/anvil-chain.js";
import { FeedError, readPriceFeed } from "../../src/chain/price-feed.js";

let chain: LocalChain;
beforeAll(async () => {
  chain = await startLocalChain();
});
afterAll(async () => {
  await chain?.stop();
});

const deploy = (answer: bigint, description = "NET / USD") => deployPriceFeed(chain.deployerWallet, chain.public, { decimals: 8, description, answer });
const blockTime = async (hash: `0x${string}`) => {
  const receipt = await chain.public.getTransactionReceipt({ hash });
  return (await chain.public.getBlock({ blockNumber: receipt.blockNumber })).timestamp;
};
const failure = (address: `0x${string}`) =>
  readPriceFeed(chain.public, address).then(
    () => expect.fail("the feed was read"),
    (e: unknown) => e as FeedError,
  );

describe("a price feed (AggregatorV3Interface) on a local chain", () => {
  it("reads the latest round: answer, decimals, round, update time and description", async () => {
    const feed = await deploy(250_000_000n);
    const reading = await readPriceFeed(chain.public, feed);
    const head = await chain.public.getBlock();
    expect(reading).toEqual({
      address: feed.toLowerCase(),
      roundId: 1n,
      answer: 250_000_000n,
      decimals: 8,
      updatedAt: new Date(Number(head.timestamp) * 1000),
      description: "NET / USD",
    });
    const checksummed = (await readPriceFeed(chain.public, feed.toUpperCase().replace("0X", "0x") as `0x${string}`)).address;
    expect(checksummed).toBe(feed.toLowerCase());
  });

  it("sees an update: a new round, its answer and its update time (given, or the block's)", async () => {
    const feed = await deploy(300_000_000_000n, "ETH / USD");
    await updatePriceFeed(chain.deployerWallet, chain.public, feed, 310_000_000_000n, 1_900_000_000n);
    expect(await readPriceFeed(chain.public, feed)).toMatchObject({ roundId: 2n, answer: 310_000_000_000n, updatedAt: new Date(1_900_000_000_000) });
    const hash = await updatePriceFeed(chain.deployerWallet, chain.public, feed, 305_000_000_000n);
    const at = await blockTime(hash);
    expect(await readPriceFeed(chain.public, feed)).toMatchObject({ roundId: 3n, answer: 305_000_000_000n, updatedAt: new Date(Number(at) * 1000) });
    // Earlier rounds stay readable, as Chainlink's do; a round that never was reverts.
    const round2 = await chain.public.readContract({ address: feed, abi: PriceFeed.abi, functionName: "getRoundData", args: [2n] });
    expect(round2).toEqual([2n, 310_000_000_000n, 1_900_000_000n, 1_900_000_000n, 2n]);
    await expect(chain.public.readContract({ address: feed, abi: PriceFeed.abi, functionName: "getRoundData", args: [9n] })).rejects.toThrow(/NoDataPresent/);
  });

  it("only its owner updates it or breaks it", async () => {
    const feed = await deploy(100_000_000n, "TUSD / USD");
    const stranger = privateKeyToAccount(generatePrivateKey());
    await chain.test.setBalance({ address: stranger.address, value: parseEther("1") });
    await expect(updatePriceFeed(chain.wallet(stranger), chain.public, feed, 1n)).rejects.toThrow(/NotOwner/);
    await expect(setPriceFeedBroken(chain.wallet(stranger), chain.public, feed, true)).rejects.toThrow(/NotOwner/);
    expect(await readPriceFeed(chain.public, feed)).toMatchObject({ roundId: 1n, answer: 100_000_000n });
  });

  it("a broken feed throws FeedError naming the feed and its error; mended, it reads again", async () => {
    const feed = await deploy(250_000_000n);
    await setPriceFeedBroken(chain.deployerWallet, chain.public, feed, true);
    const e = await failure(feed);
    expect(e).toBeInstanceOf(FeedError);
    expect(e.reason).toBe("reverted");
    expect(e.message).toContain(`price feed ${feed.toLowerCase()} reverted: FeedBroken()`);
    expect(e.message).toMatch(/The contract function "latestRoundData" reverted/);
    await expect(chain.public.readContract({ address: feed, abi: PriceFeed.abi, functionName: "getRoundData", args: [1n] })).rejects.toThrow(/FeedBroken/);
    await setPriceFeedBroken(chain.deployerWallet, chain.public, feed, false);
    expect(await readPriceFeed(chain.public, feed)).toMatchObject({ roundId: 1n, answer: 250_000_000n });
  });

  it("a feed answering 0 or less is no price", async () => {
    const zero = await deploy(0n);
    expect(await failure(zero)).toMatchObject({ reason: "non_positive_answer", message: `price feed ${zero} answered 0 in round 1: not a price` });
    const feed = await deploy(250_000_000n);
    await updatePriceFeed(chain.deployerWallet, chain.public, feed, -5n);
    expect(await failure(feed)).toMatchObject({ reason: "non_positive_answer", message: expect.stringContaining("answered -5 in round 2") });
  });

  it("an address without a feed throws FeedError", async () => {
    const nobody = privateKeyToAccount(generatePrivateKey()).address;
    expect(await failure(nobody)).toMatchObject({ reason: "no_data", message: expect.stringContaining(`price feed ${nobody.toLowerCase()} answered nothing`) });
    // A contract that is no feed (the payout vault) reverts without data.
    const e = await failure(chain.vault);
    expect(e).toBeInstanceOf(FeedError);
    expect(e.message).toContain(`price feed ${chain.vault}`);
  });
});
