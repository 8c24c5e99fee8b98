/**
 * `npm run chain:local`: a local chain to pay out on, for trying the service by hand. Starts anvil
 * (a block every second), deploys the payout vault and the 6-decimal test stablecoin, funds the
 * vault, and writes data/local-chain.json (the CHAINS_FILE to start the service with) and the
 * treasury signer's key to data/local-signer-key (mode 600). Runs until Ctrl-C.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { encodeFunctionData, parseEther } from "viem";
import { TestStablecoin } from "../contracts/artifacts.js";
import { chainSettingsFor, CHAIN_ID, startLocalChain } from "./anvil-chain.js";

const port = Number(process.env.CHAIN_PORT ?? 8545);
const chain = await startLocalChain({ port, blockTime: 1 }).catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
await chain.send({ to: chain.token, data: encodeFunctionData({ abi: TestStablecoin.abi, functionName: "mint", args: [chain.vault, 1_000_000_000_000n] }) });
await chain.send({ to: chain.vault, value: parseEther("1000") });
mkdirSync("data", { recursive: true });
writeFileSync("data/local-signer-key", `${chain.signerKey}\n`, { mode: 0o600 });
chmodSync("data/local-signer-key", 0o600);
const { signer_key_env: _unused, ...settings } = chainSettingsFor(chain, {
  confirmations: 2,
  assets: [
    { code: "TUSD", token: chain.token, decimals: 6 },
    { code: "ETH", decimals: 18 },
  ],
  signer_key_file: "data/local-signer-key",
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
    ],
    null,
    2,
  ) + "\n",
);
console.log(`anvil listening on ${chain.rpcUrl} (chain id ${CHAIN_ID}, a block every second)
payout vault      ${chain.vault}  (funded: 1,000,000 TUSD and 1,000 ETH)
test stablecoin   ${chain.token}  (TUSD, 6 decimals; anyone may mint)
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
