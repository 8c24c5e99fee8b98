/**
 * `npm run chain:local`: a local chain to pay out on, for trying the service by hand. Starts anvil
 * (a block every second), deploys the payout vault, the 6-decimal test stablecoin (TUSD), the
 * 18-decimal project token (NET) and price feeds (NET, ETH and TUSD in USD, 8 decimals), funds the
 * vault, and writes data/local-chain.json (the CHAINS_FILE to start the service with) and the
 * treasury signer's key to data/local-signer-key (mode 600). Runs until Ctrl-C.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { encodeFunctionData, formatUnits, parseEther } from "viem";
import { TestStablecoin, TestToken } from "../contracts/artifacts.js";
import { chainSettingsFor, CHAIN_ID, deployPriceFeed, deployTestToken, startLocalChain } from "./anvil-chain.js";

const port = Number(process.env.CHAIN_PORT ?? 8545);
const chain = await startLocalChain({ port, blockTime: 1 }).catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
await chain.send({ to: chain.token, data: encodeFunctionData({ abi: TestStablecoin.abi, functionName: "mint", args: [chain.vault, 1_000_000_000_000n] }) });
await chain.send({ to: chain.vault, value: parseEther("1000") });
const net = await deployTestToken(chain.deployerWallet, chain.public, { name: "Test project token", symbol: "NET", decimals: 18 });
await chain.send({ to: net, data: encodeFunctionData({ abi: TestToken.abi, functionName: "mint", args: [chain.vault, parseEther("1000000")] }) });
// Prices in USD with 8 decimals, as Chainlink's USD feeds answer.
const feeds = [
  { base: "NET", quote: "USD", answer: 250_000_000n },
  { base: "ETH", quote: "USD", answer: 300_000_000_000n },
  { base: "TUSD", quote: "USD", answer: 100_000_000n },
];
const priceFeeds: Array<{ base: string; quote: string; address: `0x${string}` }> = [];
for (const f of feeds) {
  const address = await deployPriceFeed(chain.deployerWallet, chain.public, { decimals: 8, description: `${f.base} / ${f.quote}`, answer: f.answer });
  priceFeeds.push({ base: f.base, quote: f.quote, address });
}
mkdirSync("data", { recursive: true });
writeFileSync("data/local-signer-key", `${chain.signerKey}\n`, { mode: 0o600 });
chmodSync("data/local-signer-key", 0o600);
const { signer_key_env: _unused, ...settings } = chainSettingsFor(chain, {
  confirmations: 2,
  assets: [
    { code: "TUSD", token: chain.token, decimals: 6 },
    { code: "ETH", decimals: 18 },
    { code: "NET", token: net, decimals: 18 },
  ],
  signer_key_file: "data/local-signer-key",
  price_feeds: priceFeeds,
});
writeFileSync("data/local-chain.json", JSON.stringify([settings], null, 2) + "\n");
// The bodies of POST /v1/assets for what settles here (each item's settlement is also the body of
// PATCH /v1/assets/{code} when the asset is registered already, after a restart).
writeFileSync(
  "data/local-assets.json",
  JSON.stringify(
    [
      { code: "TUSD", scale: 6, settlement: { kind: "erc20", chain_id: CHAIN_ID, token_address: chain.token } },
      { code: "ETH", scale: 18, settlement: { kind: "native", chain_id: CHAIN_ID } },
      { code: "NET", scale: 18, settlement: { kind: "erc20", chain_id: CHAIN_ID, token_address: net } },
    ],
    null,
    2,
  ) + "\n",
);
console.log(`anvil listening on ${chain.rpcUrl} (chain id ${CHAIN_ID}, a block every second)
payout vault      ${chain.vault}  (funded: 1,000,000 TUSD, 1,000,000 NET and 1,000 ETH)
test stablecoin   ${chain.token}  (TUSD, 6 decimals; anyone may mint)
project token     ${net}  (NET, 18 decimals; anyone may mint)
${priceFeeds.map((f, i) => `price feed        ${f.address}  (${f.base} / ${f.quote}: ${formatUnits(feeds[i]!.answer, 8)}, 8 decimals)`).join("\n")}
treasury signer   ${chain.signer.address}  (key in data/local-signer-key)

Start the service paying out on it:
  CHAINS_FILE=data/local-chain.json npm start
and register the assets it settles (POST /v1/assets with each item of data/local-assets.json).
If TUSD is registered already (this chain was restarted: POST answers 409 asset_exists), its token
changes by proposal instead: one admin key sends
  PATCH /v1/assets/TUSD  {"settlement": {"kind": "erc20", "chain_id": ${CHAIN_ID}, "token_address": "${chain.token}"}}
and another approves it (POST /v1/proposals/{id}/approve); see the README, "After restarting the local chain".
Ctrl-C stops the chain (its state is not kept).`);
const stop = async () => {
  await chain.stop();
  process.exit(0);
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
