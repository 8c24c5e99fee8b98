import { encodeFunctionData, parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestStablecoin } from "../../contracts/artifacts.js";
import { chainSettingsFor, startLocalChain, type LocalChain } from "../../scripts/anvil-chain.js";
import { loadChains } from "../../src/chain/config.js";
import { Settlements } from "../../src/chain/settlement.js";
import { ensureAccounts } from "../../src/db/ensure-accounts.js";
import { getAssetByCode } from "../../src/db/queries/assets.js";
import { writeTransfers } from "../../src/db/transfer-writer.js";
import { chart, specKey } from "../../src/domain/chart.js";
import { createLogger } from "../../src/log.js";
import { createAsset } from "../../src/services/create-asset.js";
import { registerOperator } from "../../src/services/marketplaces.js";
import { getPayout } from "../../src/services/payouts.js";
import { PayoutWorker } from "../../src/workers/payout-worker.js";
import { freshDatabase, type TestDatabase } from "../support/db.js";
import { expectStatus, testApi, type TestApi } from "../support/http.js";

/**
 * A first address on a chain is not onboarding when the operator is established elsewhere. When it
 * was taken as such (first address on the chain, the operator's key, nothing owed at that moment),
 * an admin paid an established operator out in full to its own address, so that nothing was owed,
 * minted an operator key and set its own address as the operator's first on chain B at once: the
 * operator's chain-B earnings were then paid to it. Now only a new operator (never an address,
 * never earned) sets a first address alone; an established one's address on another chain agrees.
 */
let a: LocalChain;
let b: LocalChain;
let db: TestDatabase | undefined;
let api: TestApi | undefined;
beforeAll(async () => {
  [a, b] = await Promise.all([startLocalChain({ chainId: 31337 }), startLocalChain({ chainId: 31338 })]);
  for (const c of [a, b]) {
    await c.send({ to: c.token, data: encodeFunctionData({ abi: TestStablecoin.abi, functionName: "mint", args: [c.vault, 1_000_000_000n] }) });
    await c.send({ to: c.vault, value: parseEther("10") });
  }
});
afterAll(async () => {
  await api?.close();
  await db?.destroy();
  await Promise.all([a?.stop(), b?.stop()]);
});

describe("a first address on a second chain of an established operator", () => {
  it("is not set at once by an operator key an admin mints: a proposal; the operator's address on chain A agrees to its own", async () => {
    db = await freshDatabase();
    const env = { KEY_A: a.signerKey, KEY_B: b.signerKey };
    const settlements = new Settlements(
      loadChains(
        {
          CHAINS: JSON.stringify([
            chainSettingsFor(a, { name: "alpha", native_asset: { code: "ETH-A", decimals: 18 } }, "KEY_A"),
            chainSettingsFor(b, { name: "beta", native_asset: { code: "ETH-B", decimals: 18 } }, "KEY_B"),
          ]),
        },
        env,
      ),
    );
    await createAsset(db, { code: "TUSD-A", scale: 6, settlement: { kind: "erc20", chainId: 31337, tokenAddress: a.token } });
    await createAsset(db, { code: "TUSD-B", scale: 6, settlement: { kind: "erc20", chainId: 31338, tokenAddress: b.token } });
    api = await testApi({ db, settlements });
    const t = api;
    const key = async (role: string, scope_id?: string, by?: string) =>
      expectStatus(await t.call("POST", "/v1/api-keys", { key: by, body: { name: role, role, scope_id } }), 201).body.secret as string;
    const mallory = await key("admin");
    const alice = await key("admin");
    await registerOperator(db, { id: "op1", name: "GPU farm" });
    const op = await key("operator", "op1", alice);

    const prove = async (k: string, chainId: number, acct: PrivateKeyAccount) => {
      const ch = expectStatus(
        await t.call("POST", "/v1/operators/op1/payout-address-challenges", { key: k, body: { chain_id: chainId, address: acct.address } }),
        201,
      ).body as { id: string; message: string };
      return t.call("PUT", "/v1/operators/op1/payout-address", {
        key: k,
        body: { chain_id: chainId, address: acct.address, challenge_id: ch.id, signature: await acct.signMessage({ message: ch.message }) },
      });
    };
    const credit = async (code: string, amount: bigint) => {
      const asset = (await getAssetByCode(db!, code))!;
      const funding = {
        assetId: asset.id,
        marketplaceId: null,
        ref: "test:funding",
        code: "test_funding",
        ownerType: "platform",
        ownerId: "test",
        normalSide: "debit" as const,
      };
      const payable = chart.operatorPayable(asset.id, "op1");
      const [r] = await writeTransfers(db!, async (tx) => {
        const ids = await ensureAccounts(tx, [funding, payable]);
        return [
          {
            kind: "standard",
            idempotencyKey: `c:${code}:${Math.random()}`,
            legs: [{ debitAccountId: ids.get(specKey(funding))!, creditAccountId: ids.get(specKey(payable))!, amount }],
          },
        ];
      });
      if (!r!.ok) throw r!.error;
    };

    // The operator is established on chain A: its own wallet, earnings, paid.
    const wallet = privateKeyToAccount(generatePrivateKey());
    expectStatus(await prove(op, 31337, wallet), 200);
    await credit("TUSD-A", 5_000_000n);
    // Mallory pays the operator out in full — to the operator's own address, nothing suspicious — so nothing is owed.
    const p1 = expectStatus(await t.call("POST", "/v1/payouts", { key: mallory, body: { operator_id: "op1", asset: "TUSD-A", amount: "5000000" } }), 201).body;
    const worker = new PayoutWorker(db, settlements, { log: createLogger("silent") });
    for (let i = 0; i < 30 && (await getPayout(db, p1.id))!.status !== "confirmed"; i++) {
      await worker.tick();
      await Promise.all([a.test.mine({ blocks: 1 }), b.test.mine({ blocks: 1 })]);
    }
    expect((await getPayout(db, p1.id))!.status).toBe("confirmed");

    // Mallory mints an operator key and proves her own address as the operator's first on chain B.
    const minted = await key("operator", "op1", mallory);
    const thief = privateKeyToAccount(generatePrivateKey());
    const res = await prove(minted, 31338, thief);
    // Later the operator earns on chain B (a marketplace priced in TUSD-B); mallory pays it out.
    await credit("TUSD-B", 7_000_000n);
    const p2 = await t.call("POST", "/v1/payouts", { key: mallory, body: { operator_id: "op1", asset: "TUSD-B", amount: "7000000" } });
    // One admin alone does not decide where the operator is paid: a proposal, and no payout to mallory.
    expect(res.status, `set at once by one admin's minted key: ${JSON.stringify(res.body)}`).toBe(202);
    expect(p2.status).toBeGreaterThanOrEqual(400);
    // The operator's own wallet on chain A agrees to its chain-B address: set at once.
    const ch = expectStatus(
      await t.call("POST", "/v1/operators/op1/payout-address-challenges", { key: op, body: { chain_id: 31338, address: wallet.address } }),
      201,
    ).body;
    const signature = await wallet.signMessage({ message: ch.message });
    const own = await t.call("PUT", "/v1/operators/op1/payout-address", {
      key: op,
      body: { chain_id: 31338, address: wallet.address, challenge_id: ch.id, signature, current_address_signature: signature },
    });
    expect(expectStatus(own, 200).body).toMatchObject({ chain_id: 31338, address: wallet.address.toLowerCase(), changed: true });
  }, 120_000);
});
