import { encodeFunctionData, parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { afterEach, describe, expect, it } from "vitest";
import { TestToken } from "../../contracts/artifacts.js";
import { deployTestToken } from "../../scripts/anvil-chain.js";
import { depositAddressMessage } from "../../src/domain/payouts.js";
import { createAsset } from "../../src/services/create-asset.js";
import { createCustomer, createMarketplace } from "../../src/services/marketplaces.js";
import { registerDepositAddress } from "../../src/services/chain-deposits.js";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { payoutWorld, TOKEN, type PayoutWorld } from "../support/payout-world.js";

let w: PayoutWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

/** A token anyone can mint, registered as ledger asset FREE on the local chain. */
async function freeToken(world: PayoutWorld) {
  const token = await deployTestToken(world.chain.deployerWallet, world.chain.public, { name: "Free", symbol: "FREE", decimals: 6 });
  await createAsset(world.db, { code: "FREE", scale: 6, settlement: { kind: "erc20", chainId: 31337, tokenAddress: token } });
  return token;
}

/** A customer's wallet, registered as its deposit address, with gas. */
async function depositor(world: PayoutWorld): Promise<PrivateKeyAccount> {
  await createMarketplace(world.db, { id: "mk", name: "mk" });
  await createCustomer(world.db, { marketplaceId: "mk", id: "buyer", billing: "prepaid" });
  const payer = privateKeyToAccount(generatePrivateKey());
  await world.chain.test.setBalance({ address: payer.address, value: parseEther("1") });
  await registerDepositAddress(world.db, world.settlements, {
    marketplaceId: "mk",
    customerId: "buyer",
    chainId: 31337n,
    address: payer.address,
    signature: await payer.signMessage({
      message: depositAddressMessage({ marketplaceId: "mk", customerId: "buyer", chainId: 31337n, address: payer.address }),
    }),
    createdBy: "test",
  });
  return payer;
}

/** Mints `amount` of a token to the payer, who pays it into the vault. */
async function payVault(world: PayoutWorld, payer: PrivateKeyAccount, token: `0x${string}`, amount: bigint) {
  const chain = world.chain.deployerWallet.chain;
  await world.chain
    .wallet(payer)
    .writeContract({ address: token, abi: TestToken.abi, functionName: "mint", args: [payer.address, amount], chain, account: payer });
  await world.chain
    .wallet(payer)
    .writeContract({ address: token, abi: TestToken.abi, functionName: "transfer", args: [world.chain.vault, amount], chain, account: payer });
}

const credited = async (world: PayoutWorld) =>
  world.db.query<{ code: string; amount: string }>(
    "select a.code, d.amount::text as amount from chain_deposits d join assets a on a.id = d.asset_id order by a.code",
  );

describe("the deposit scanner credits only the assets a chain's settings enable", () => {
  it("a customer pays the vault in a token registered as an asset but not listed in the chain's settings: not credited; a listed token is", async () => {
    w = await payoutWorld();
    const free = await freeToken(w);
    const payer = await depositor(w);
    // The chain settles TUSD only (and its native token): FREE is registered in the ledger, not enabled here.
    const worker = w.worker({ chainOverrides: { assets: [{ code: TOKEN, token: w.chain.token, decimals: 6 }] } });
    // The customer mints itself a million FREE and pays them in, and pays 5 TUSD.
    await payVault(w, payer, free, 1_000_000_000_000n);
    await payVault(w, payer, w.chain.token, 5_000_000n);
    await w.chain.test.mine({ blocks: 2 });
    await worker.tick();
    await worker.tick();
    expect(await credited(w)).toEqual([{ code: TOKEN, amount: "5000000" }]);
    const spendable = await w.db.query<{ code: string; c: string }>(
      `select s.code, b.credits_posted::text as c from accounts a join assets s on s.id = a.asset_id
         join account_balances b on b.account_id = a.id where a.ref = 'customer:buyer' order by s.code`,
    );
    expect(spendable).toEqual([{ code: TOKEN, c: "5000000" }]);
    expect((await verifyLedger(w.db)).violations).toEqual([]);
  });

  it("a chain whose settings name another token for the asset than the ledger does: the ledger's token is not credited until they agree", async () => {
    w = await payoutWorld();
    const payer = await depositor(w);
    // The settings name a redeployed token for TUSD; the ledger still has the old one.
    const redeployed = await w.chain.deployStablecoin();
    const worker = w.worker({ chainOverrides: { assets: [{ code: TOKEN, token: redeployed, decimals: 6 }] } });
    const old = w.chain.token;
    await w.chain.send({
      to: old,
      data: encodeFunctionData({ abi: TestToken.abi, functionName: "mint", args: [payer.address, 7_000_000n] }),
    });
    await w.chain.wallet(payer).writeContract({
      address: old,
      abi: TestToken.abi,
      functionName: "transfer",
      args: [w.chain.vault, 7_000_000n],
      chain: w.chain.deployerWallet.chain,
      account: payer,
    });
    await w.chain.test.mine({ blocks: 2 });
    await worker.tick();
    expect(await credited(w)).toEqual([]);
    // Once the settings agree with the ledger, the transfer that waited is credited, once.
    const agreeing = w.worker({ chainOverrides: { assets: [{ code: TOKEN, token: old, decimals: 6 }] } });
    await agreeing.tick();
    await agreeing.tick();
    expect(await credited(w)).toEqual([{ code: TOKEN, amount: "7000000" }]);
  });
});
