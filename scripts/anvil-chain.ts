/**
 * A local EVM chain for tests and the demo: anvil from the @foundry-rs/anvil npm package, with the
 * project's contracts deployed (the payout vault, a 6-decimal test stablecoin). Keys are generated
 * fresh for every chain. Also the helpers deploying and driving the other test contracts (price
 * feeds, tokens of any decimals) from any wallet.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  http,
  parseEther,
  type Hex,
  type PublicClient,
  type TestClient,
  type WalletClient,
} from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { PayoutVault, PriceFeed, RejectsNative, TestStablecoin, TestToken } from "../contracts/artifacts.js";

export const CHAIN_ID = 31337;

export function anvilBinary(): string {
  const candidates = [`anvil-${process.platform}-${process.arch === "x64" ? "amd64" : process.arch}`].map((p) =>
    join(import.meta.dirname, "..", "node_modules", "@foundry-rs", p, "bin", process.platform === "win32" ? "anvil.exe" : "anvil"),
  );
  const found = candidates.find((c) => existsSync(c));
  if (!found) throw new Error(`anvil binary not found (looked for ${candidates.join(", ")}); run npm install`);
  return found;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

export interface LocalChain {
  chainId: number;
  rpcUrl: string;
  port: number;
  process: ChildProcess;
  public: PublicClient;
  test: TestClient<"anvil">;
  deployer: PrivateKeyAccount;
  deployerWallet: WalletClient;
  /** The treasury signer: owns the vault and pays gas. */
  signerKey: Hex;
  signer: PrivateKeyAccount;
  vault: `0x${string}`;
  token: `0x${string}`;
  wallet(account: PrivateKeyAccount): WalletClient;
  /** Sends a transaction from the deployer and waits for its receipt (mining a block if automine is off). */
  send(tx: { to: `0x${string}`; data?: Hex; value?: bigint }): Promise<Hex>;
  tokenBalance(address: string): Promise<bigint>;
  nativeBalance(address: string): Promise<bigint>;
  deployRejectsNative(): Promise<`0x${string}`>;
  /** Another test stablecoin (6 decimals). */
  deployStablecoin(): Promise<`0x${string}`>;
  stop(): Promise<void>;
}

export async function startLocalChain(options: { blockTime?: number; port?: number; chainId?: number } = {}): Promise<LocalChain> {
  const port = options.port ?? (await freePort());
  const chainId = options.chainId ?? CHAIN_ID;
  const args = ["--host", "127.0.0.1", "--port", String(port), "--chain-id", String(chainId), "--accounts", "1"];
  if (options.blockTime) args.push("--block-time", String(options.blockTime));
  const child = spawn(anvilBinary(), args, { stdio: ["ignore", "pipe", "pipe"] });
  await new Promise<void>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`anvil did not start: ${out}`)), 20_000);
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("Listening on")) {
        clearTimeout(timer);
        resolve();
      }
    });
    let err = "";
    child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
    child.once("exit", (code) => {
      clearTimeout(timer);
      const why = /address already in use/i.test(err)
        ? `port ${port} on 127.0.0.1 is already in use (another local chain, or another program): stop it, or choose another port (CHAIN_PORT for npm run chain:local)`
        : (err.trim() || out.trim() || "no output").split("\n")[0];
      reject(new Error(`anvil could not start: ${why} (exit code ${code})`));
    });
  });
  child.stdout!.resume();
  const rpcUrl = `http://127.0.0.1:${port}`;
  const transport = http(rpcUrl, { retryCount: 0 });
  const pub = createPublicClient({ transport, cacheTime: 0 }) as PublicClient;
  const test = createTestClient({ mode: "anvil", transport });
  const deployer = privateKeyToAccount(generatePrivateKey());
  const signerKey = generatePrivateKey();
  const signer = privateKeyToAccount(signerKey);
  await test.setBalance({ address: deployer.address, value: parseEther("1000000") });
  await test.setBalance({ address: signer.address, value: parseEther("100") });
  const wallet = (account: PrivateKeyAccount) =>
    createWalletClient({
      account,
      transport,
      chain: { id: chainId, name: "anvil", nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [rpcUrl] } } },
    });
  const deployerWallet = wallet(deployer);

  const mineIfManual = async (hash: Hex) => {
    const auto = await test.getAutomine();
    if (!auto) await test.mine({ blocks: 1 });
    return pub.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  };
  const deploy = async (abi: readonly unknown[], bytecode: Hex, args: unknown[] = []) => {
    const hash = await deployerWallet.deployContract({ abi, bytecode, args, account: deployer, chain: deployerWallet.chain } as never);
    const receipt = await mineIfManual(hash);
    return receipt.contractAddress!.toLowerCase() as `0x${string}`;
  };
  const vault = await deploy(PayoutVault.abi, PayoutVault.bytecode, [signer.address]);
  const token = await deploy(TestStablecoin.abi, TestStablecoin.bytecode);

  return {
    chainId,
    rpcUrl,
    port,
    process: child,
    public: pub,
    test,
    deployer,
    deployerWallet,
    signerKey,
    signer,
    vault,
    token,
    wallet,
    async send(tx) {
      const hash = await deployerWallet.sendTransaction({ ...tx, account: deployer, chain: deployerWallet.chain });
      await mineIfManual(hash);
      return hash;
    },
    tokenBalance: (address) => pub.readContract({ address: token, abi: TestStablecoin.abi, functionName: "balanceOf", args: [address as `0x${string}`] }),
    nativeBalance: (address) => pub.getBalance({ address: address as `0x${string}` }),
    deployRejectsNative: () => deploy(RejectsNative.abi, RejectsNative.bytecode),
    deployStablecoin: () => deploy(TestStablecoin.abi, TestStablecoin.bytecode),
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** The CHAINS setting for a service paying on this chain (the signer key is read from `keyEnv`). */
export function chainSettingsFor(chain: LocalChain, extra: Record<string, unknown> = {}, keyEnv = "TREASURY_SIGNER_KEY") {
  return {
    name: "local",
    chain_id: chain.chainId,
    rpc_urls: [chain.rpcUrl],
    confirmations: 2,
    signer_key_env: keyEnv,
    vault: chain.vault,
    native_asset: { code: "ETH", decimals: 18 },
    replace_after_seconds: 5,
    ...extra,
  };
}

/** The wallet's account, which signs the helpers' transactions. */
function accountOf(wallet: WalletClient) {
  if (!wallet.account) throw new Error("the wallet client has no account to send from");
  return wallet.account;
}

/** Waits for a transaction's receipt and throws when it reverted. */
async function mined(publicClient: PublicClient, hash: Hex, what: string) {
  const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  if (receipt.status !== "success") throw new Error(`${what} reverted (transaction ${hash})`);
  return receipt;
}

async function deployWith(wallet: WalletClient, publicClient: PublicClient, abi: readonly unknown[], bytecode: Hex, args: unknown[], what: string) {
  const hash = await wallet.deployContract({ abi, bytecode, args, account: accountOf(wallet), chain: wallet.chain } as never);
  const receipt = await mined(publicClient, hash, what);
  return receipt.contractAddress!.toLowerCase() as `0x${string}`;
}

/** Deploys a price feed (contracts/PriceFeed.sol) owned by the wallet's account; waits for the receipt. */
export function deployPriceFeed(
  wallet: WalletClient,
  publicClient: PublicClient,
  opts: { decimals: number; description: string; answer: bigint },
): Promise<`0x${string}`> {
  return deployWith(
    wallet,
    publicClient,
    PriceFeed.abi,
    PriceFeed.bytecode,
    [opts.decimals, opts.description, opts.answer],
    `deploying price feed ${opts.description}`,
  );
}

/** Starts a new round of a price feed answering `answer`, updated at `updatedAt` (seconds; default: the block's time). */
export async function updatePriceFeed(
  wallet: WalletClient,
  publicClient: PublicClient,
  address: `0x${string}`,
  answer: bigint,
  updatedAt: bigint = 0n,
): Promise<Hex> {
  const hash = await wallet.writeContract({
    address,
    abi: PriceFeed.abi,
    functionName: "update",
    args: [answer, updatedAt],
    account: accountOf(wallet),
    chain: wallet.chain,
  });
  await mined(publicClient, hash, `updating price feed ${address}`);
  return hash;
}

/** Makes a price feed's reads revert with FeedBroken() (or work again). */
export async function setPriceFeedBroken(wallet: WalletClient, publicClient: PublicClient, address: `0x${string}`, broken: boolean): Promise<Hex> {
  const hash = await wallet.writeContract({
    address,
    abi: PriceFeed.abi,
    functionName: "setBroken",
    args: [broken],
    account: accountOf(wallet),
    chain: wallet.chain,
  });
  await mined(publicClient, hash, `setting price feed ${address} broken=${broken}`);
  return hash;
}

/** Deploys an ERC-20 test token (contracts/test/TestToken.sol: anyone may mint) of any decimals. */
export function deployTestToken(
  wallet: WalletClient,
  publicClient: PublicClient,
  opts: { name: string; symbol: string; decimals: number },
): Promise<`0x${string}`> {
  return deployWith(wallet, publicClient, TestToken.abi, TestToken.bytecode, [opts.name, opts.symbol, opts.decimals], `deploying token ${opts.symbol}`);
}
