import { readFileSync } from "node:fs";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { z } from "zod";
import { parseFraction } from "../domain/payouts.js";

const Address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "must be a 20-byte hex address");
const AssetCode = z.string().min(1).max(32);

/** One EVM chain the treasury pays out on (the JSON of CHAINS or CHAINS_FILE is a list of these). */
export const ChainSettingsInput = z
  .strictObject({
    name: z.string().min(1).max(64),
    chain_id: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
    rpc_urls: z.array(z.url()).min(1).describe("tried in order: the next when one fails"),
    confirmations: z.number().int().min(1).max(10_000).default(3).describe("blocks a payout transaction must be buried under"),
    signer_key_env: z.string().min(1).optional().describe("name of the environment variable holding the treasury signer's private key"),
    signer_key_file: z.string().min(1).optional().describe("file holding the treasury signer's private key"),
    vault: Address.describe("the PayoutVault contract that holds the treasury and pays batches"),
    native_asset: z
      .strictObject({ code: z.string().min(1).max(32), decimals: z.number().int().min(0).max(36).default(18) })
      .describe("the ledger asset of the chain's native token, in which gas is booked (created if missing)"),
    assets: z
      .array(
        z.strictObject({
          code: z.string().min(1).max(32),
          token: Address.optional().describe("the ERC-20 token; absent for the native token"),
          decimals: z.number().int().min(0).max(36),
        }),
      )
      .optional()
      .describe("the assets that settle here; when given, only these are paid out, and each must match its ledger asset (token and scale)"),
    native_prices: z
      .record(z.string(), z.string().regex(/^\d{1,30}(\.\d{1,30})?$/))
      .default({})
      .describe("per asset code: the price of one native token in whole units of that asset, for gas caps of token payouts"),
    max_batch_size: z.number().int().min(1).max(500).default(100),
    replace_after_seconds: z.number().int().min(1).max(86_400).default(60).describe("a transaction unmined this long is replaced with higher fees"),
    max_fee_per_gas_gwei: z
      .number()
      .positive()
      .max(1_000_000)
      .optional()
      .describe("never sign a transaction paying more per gas than this (replacements stop at it)"),
    rpc_timeout_ms: z.number().int().min(100).max(120_000).default(10_000),
    log_chunk_blocks: z.number().int().min(1).max(1_000_000).default(2_000).describe("blocks per eth_getLogs call (nodes cap the range)"),
    deposit_start_block: z.number().int().min(0).default(0).describe("the block the deposit scanner starts from"),
    price_feeds: z
      .array(z.strictObject({ base: AssetCode, quote: AssetCode, address: Address }))
      .default([])
      .describe("on-chain price feeds (Chainlink AggregatorV3Interface): one whole `base` is worth answer / 10^decimals whole `quote`"),
  })
  .refine((c) => (c.signer_key_env === undefined) !== (c.signer_key_file === undefined), {
    message: "give exactly one of signer_key_env and signer_key_file",
  });

export interface ChainSettings extends Omit<
  z.infer<typeof ChainSettingsInput>,
  "signer_key_env" | "signer_key_file" | "native_prices" | "vault" | "price_feeds"
> {
  chainId: bigint;
  vault: `0x${string}`;
  /** One whole `base` is worth answer / 10^decimals whole `quote` (addresses lowercase). */
  priceFeeds: PriceFeedSettings[];
  /** The treasury signer. The key itself is held by the account object and never stored elsewhere. */
  signer: PrivateKeyAccount;
  nativePrices: Map<string, { num: bigint; den: bigint }>;
}

export interface PriceFeedSettings {
  base: string;
  quote: string;
  address: `0x${string}`;
}

/**
 * An asset code names one ledger asset, and a ledger asset settles on one chain as one token (or
 * that chain's native token): two chains whose native tokens share a code ("ETH" on two L2s), or one
 * code for tokens on two chains, would pay on one chain and book on the other's asset. Refused at
 * start, naming the code and the chains.
 */
function refuseAmbiguousAssetCodes(chains: z.infer<typeof ChainSettingsInput>[]): void {
  const seen = new Map<string, { chain: string; what: string }>();
  const problems: string[] = [];
  for (const c of chains) {
    const claims = [
      { code: c.native_asset.code, what: "native" },
      ...(c.assets ?? []).map((a) => ({ code: a.code, what: a.token?.toLowerCase() ?? "native" })),
    ];
    for (const { code, what } of claims) {
      const first = seen.get(code);
      if (!first) seen.set(code, { chain: `${c.name} (${c.chain_id})`, what });
      else if (first.chain !== `${c.name} (${c.chain_id})` || first.what !== what) {
        const describe = (x: { chain: string; what: string }) => `${x.what === "native" ? "the native token" : `token ${x.what}`} of chain ${x.chain}`;
        problems.push(`asset code ${code} names ${describe(first)} and ${describe({ chain: `${c.name} (${c.chain_id})`, what })}`);
      }
    }
  }
  if (problems.length > 0) {
    throw new Error(`ambiguous chain settings: ${[...new Set(problems)].join("; ")}; give each chain's asset a code of its own (e.g. ETH-BASE)`);
  }
}

/**
 * One price per pair of assets: two feeds of one pair (either way round: NET/USD and USD/NET), on
 * one chain or on two, could answer differently, and which one a conversion used would be chance.
 * Refused at start, naming the pair and both feeds.
 */
function refuseDuplicatePriceFeeds(chains: z.infer<typeof ChainSettingsInput>[]): void {
  const seen = new Map<string, string>();
  const problems: string[] = [];
  for (const c of chains) {
    for (const f of c.price_feeds) {
      const pair = JSON.stringify([f.base, f.quote].sort());
      const here = `${f.base}/${f.quote} at ${f.address.toLowerCase()} on chain ${c.name} (${c.chain_id})`;
      const first = seen.get(pair);
      if (first === undefined) seen.set(pair, here);
      else problems.push(`${first} and ${here}`);
    }
  }
  if (problems.length > 0) {
    throw new Error(`ambiguous chain settings: two price feeds for one pair of assets: ${problems.join("; ")}; keep one feed per pair`);
  }
}

/**
 * Reads the chains from CHAINS (inline JSON) or CHAINS_FILE, resolving each signer key from the
 * environment or its file. Throws with every problem named; the key never appears in a message.
 */
export function loadChains(source: { CHAINS?: string; CHAINS_FILE?: string }, env: NodeJS.ProcessEnv): ChainSettings[] {
  let text: string | undefined = source.CHAINS;
  if (text === undefined && source.CHAINS_FILE !== undefined) text = readFileSync(source.CHAINS_FILE, "utf8");
  if (text === undefined || text.trim() === "") return [];
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new Error(`chain settings are not valid JSON: ${(e as Error).message}`);
  }
  const parsed = z.array(ChainSettingsInput).safeParse(json);
  if (!parsed.success) {
    throw new Error(`invalid chain settings: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")}`);
  }
  refuseAmbiguousAssetCodes(parsed.data);
  refuseDuplicatePriceFeeds(parsed.data);
  const ids = new Set<number>();
  return parsed.data.map((c) => {
    if (ids.has(c.chain_id)) throw new Error(`chain ${c.chain_id} is configured twice`);
    ids.add(c.chain_id);
    const raw = c.signer_key_env !== undefined ? env[c.signer_key_env] : readFileSync(c.signer_key_file!, "utf8");
    const key = raw?.trim();
    if (!key || !/^0x[0-9a-fA-F]{64}$/.test(key)) {
      throw new Error(
        `chain ${c.name}: the signer key ${c.signer_key_env !== undefined ? `in $${c.signer_key_env}` : `in ${c.signer_key_file}`} is missing or not a 32-byte hex private key`,
      );
    }
    const { signer_key_env: _e, signer_key_file: _f, native_prices, vault, price_feeds, ...rest } = c;
    return {
      ...rest,
      chainId: BigInt(c.chain_id),
      vault: vault.toLowerCase() as `0x${string}`,
      priceFeeds: price_feeds.map((f) => ({ base: f.base, quote: f.quote, address: f.address.toLowerCase() as `0x${string}` })),
      signer: privateKeyToAccount(key as `0x${string}`),
      nativePrices: new Map(Object.entries(native_prices).map(([k, v]) => [k, parseFraction(v)])),
    };
  });
}
