import { generatePrivateKey } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { loadChains } from "../../src/chain/config.js";

const chain = (name: string, chainId: number, extra: Record<string, unknown> = {}) => ({
  name,
  chain_id: chainId,
  rpc_urls: ["http://127.0.0.1:9"],
  signer_key_env: "K",
  vault: `0x${"11".repeat(20)}`,
  native_asset: { code: "ETH" },
  ...extra,
});
const load = (chains: unknown[]) => loadChains({ CHAINS: JSON.stringify(chains) }, { K: generatePrivateKey() });

describe("chain settings: one asset code, one asset", () => {
  it("refuses two chains whose native tokens share a code, naming both", () => {
    expect(() => load([chain("base", 8453), chain("optimism", 10)])).toThrow(
      /asset code ETH names the native token of chain base \(8453\) and the native token of chain optimism \(10\)/,
    );
  });

  it("refuses one code for tokens on two chains, or for a token and a native token", () => {
    const usdc = (token: string) => ({ assets: [{ code: "USDC", token, decimals: 6 }] });
    expect(() =>
      load([
        chain("a", 1, { native_asset: { code: "ETH-A" }, ...usdc(`0x${"aa".repeat(20)}`) }),
        chain("b", 2, { native_asset: { code: "ETH-B" }, ...usdc(`0x${"bb".repeat(20)}`) }),
      ]),
    ).toThrow(/asset code USDC names token 0x(aa){20} of chain a \(1\) and token 0x(bb){20} of chain b \(2\)/);
    expect(() =>
      load([
        chain("a", 1, { native_asset: { code: "TOK" } }),
        chain("b", 2, { native_asset: { code: "ETH-B" }, assets: [{ code: "TOK", token: `0x${"bb".repeat(20)}`, decimals: 18 }] }),
      ]),
    ).toThrow(/asset code TOK names the native token of chain a \(1\) and token 0x(bb){20} of chain b \(2\)/);
  });

  it("accepts distinct codes, and a chain that lists its own native token among its assets", () => {
    const chains = load([
      chain("base", 8453, { native_asset: { code: "ETH-BASE" }, assets: [{ code: "ETH-BASE", decimals: 18 }] }),
      chain("optimism", 10, { native_asset: { code: "ETH-OP" } }),
    ]);
    expect(chains.map((c) => c.native_asset.code)).toEqual(["ETH-BASE", "ETH-OP"]);
  });
});

describe("chain settings: price feeds", () => {
  const feed = (base: string, quote: string, byte: string) => ({ base, quote, address: `0x${byte.repeat(20)}` });

  it("reads the feeds of each chain, addresses lowercase; none by default", () => {
    const [withFeeds, without] = load([
      chain("base", 8453, { native_asset: { code: "ETH-BASE" }, price_feeds: [feed("NET", "USD", "aA"), feed("ETH-BASE", "USD", "bb")] }),
      chain("optimism", 10, { native_asset: { code: "ETH-OP" } }),
    ]);
    expect(withFeeds!.priceFeeds).toEqual([
      { base: "NET", quote: "USD", address: `0x${"aa".repeat(20)}` },
      { base: "ETH-BASE", quote: "USD", address: `0x${"bb".repeat(20)}` },
    ]);
    expect(without!.priceFeeds).toEqual([]);
    expect(withFeeds).not.toHaveProperty("price_feeds");
  });

  it("refuses two feeds of one pair, either way round, on one chain or across chains, naming both", () => {
    expect(() => load([chain("base", 8453, { price_feeds: [feed("NET", "USD", "aa"), feed("NET", "USD", "bb")] })])).toThrow(
      /two price feeds for one pair of assets: NET\/USD at 0x(aa){20} on chain base \(8453\) and NET\/USD at 0x(bb){20} on chain base \(8453\)/,
    );
    expect(() =>
      load([
        chain("a", 1, { native_asset: { code: "ETH-A" }, price_feeds: [feed("NET", "USD", "aa")] }),
        chain("b", 2, { native_asset: { code: "ETH-B" }, price_feeds: [feed("USD", "NET", "bb")] }),
      ]),
    ).toThrow(/NET\/USD at 0x(aa){20} on chain a \(1\) and USD\/NET at 0x(bb){20} on chain b \(2\)/);
  });

  it("accepts one feed per pair, and refuses a malformed one", () => {
    expect(() => load([chain("base", 8453, { price_feeds: [feed("NET", "USD", "aa"), feed("NET", "ETH", "bb"), feed("ETH", "USD", "cc")] })])).not.toThrow();
    expect(() => load([chain("base", 8453, { price_feeds: [{ base: "NET", quote: "USD", address: "0x12" }] })])).toThrow(/price_feeds\.0\.address/);
    expect(() => load([chain("base", 8453, { price_feeds: [{ ...feed("NET", "USD", "aa"), decimals: 8 }] })])).toThrow(/price_feeds\.0/);
    expect(() => load([chain("base", 8453, { price_feeds: [feed("", "USD", "aa")] })])).toThrow(/price_feeds\.0\.base/);
  });
});
