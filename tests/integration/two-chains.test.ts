import { encodeFunctionData, parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestStablecoin } from "../../contracts/artifacts.js";
import { chainSettingsFor, startLocalChain, type LocalChain } from "../../scripts/anvil-chain.js";
import { loadChains } from "../../src/chain/config.js";
import { settingsConflicts } from "../../src/services/chain-settings.js";
import { Settlements } from "../../src/chain/settlement.js";
import { ensureAccounts } from "../../src/db/ensure-accounts.js";
import { chart, specKey } from "../../src/domain/chart.js";
import { writeTransfers } from "../../src/db/transfer-writer.js";
import { createLogger } from "../../src/log.js";
import { createAsset } from "../../src/services/create-asset.js";
import { registerOperator } from "../../src/services/marketplaces.js";
import { issueAddressChallenge, setPayoutAddress } from "../../src/services/payout-addresses.js";
import { createPayout, getPayout } from "../../src/services/payouts.js";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { PayoutWorker } from "../../src/workers/payout-worker.js";
import { freshDatabase, type TestDatabase } from "../support/db.js";

// Two local chains, as two L2s would be: both call their native token "ETH".
let a: LocalChain;
let b: LocalChain;
let db: TestDatabase | undefined;
beforeAll(async () => {
  [a, b] = await Promise.all([startLocalChain({ chainId: 31337 }), startLocalChain({ chainId: 31338 })]);
  for (const c of [a, b]) {
    await c.send({ to: c.token, data: encodeFunctionData({ abi: TestStablecoin.abi, functionName: "mint", args: [c.vault, 1_000_000_000n] }) });
    await c.send({ to: c.vault, value: parseEther("10") });
  }
});
afterAll(async () => {
  await db?.destroy();
  await Promise.all([a?.stop(), b?.stop()]);
});

const env = () => ({ KEY_A: a.signerKey, KEY_B: b.signerKey });
const settings = (nativeA: string, nativeB: string) =>
  JSON.stringify([
    chainSettingsFor(a, { name: "alpha", native_asset: { code: nativeA, decimals: 18 } }, "KEY_A"),
    chainSettingsFor(b, { name: "beta", native_asset: { code: nativeB, decimals: 18 } }, "KEY_B"),
  ]);

describe("two chains whose native tokens share a code", () => {
  it("are refused at start, naming both", () => {
    expect(() => loadChains({ CHAINS: settings("ETH", "ETH") }, env())).toThrow(
      /asset code ETH names the native token of chain alpha \(31337\) and the native token of chain beta \(31338\)/,
    );
  });

  it("with a code each, pay on both chains and settle each in the ledger, gas booked in each chain's own native asset", async () => {
    db = await freshDatabase();
    const settlements = new Settlements(loadChains({ CHAINS: settings("ETH-A", "ETH-B") }, env()));
    expect(await settingsConflicts(db, settlements)).toEqual([]);
    await createAsset(db, { code: "TUSD-A", scale: 6, settlement: { kind: "erc20", chainId: 31337, tokenAddress: a.token } });
    await createAsset(db, { code: "TUSD-B", scale: 6, settlement: { kind: "erc20", chainId: 31338, tokenAddress: b.token } });
    await registerOperator(db, { id: "op", name: "op" });
    const wallet = privateKeyToAccount(generatePrivateKey());
    const ids: string[] = [];
    // The new operator's own first address; on the second chain, its address on the first agrees.
    for (const chainId of [31337n, 31338n]) {
      const ch = await issueAddressChallenge(db, settlements, { operatorId: "op", chainId, address: wallet.address, now: db.clock.now() });
      const signature = await wallet.signMessage({ message: ch.message });
      const set = await setPayoutAddress(db, settlements, {
        operatorId: "op",
        chainId,
        address: wallet.address,
        challengeId: ch.id,
        signature,
        currentAddressSignature: chainId === 31337n ? undefined : signature,
        by: { keyId: "test", role: "operator", scopeId: "op" },
      });
      expect(set.kind).toBe("set");
    }
    for (const [, code] of [
      [31337n, "TUSD-A"],
      [31338n, "TUSD-B"],
    ] as const) {
      const asset = (await db.query<{ id: string }>("select id from assets where code = $1", [code]))[0]!;
      const funding = {
        assetId: asset.id,
        marketplaceId: null,
        ref: "test:funding",
        code: "test_funding",
        ownerType: "platform",
        ownerId: "test",
        normalSide: "debit" as const,
      };
      const payable = chart.operatorPayable(asset.id, "op");
      await writeTransfers(db, async (tx) => {
        const acc = await ensureAccounts(tx, [funding, payable]);
        return [
          {
            kind: "standard",
            idempotencyKey: `fund-${code}`,
            legs: [{ debitAccountId: acc.get(specKey(funding))!, creditAccountId: acc.get(specKey(payable))!, amount: 5_000_000n }],
          },
        ];
      });
      ids.push(
        (
          await createPayout(db, settlements, {
            operatorId: "op",
            asset: code,
            amount: 5_000_000n,
            trigger: "request",
            requestedBy: "test",
            idempotencyKey: `pay-${code}`,
          })
        ).payout.id,
      );
    }
    const worker = new PayoutWorker(db, settlements, { log: createLogger("silent") });
    for (let round = 0; round < 30; round++) {
      await worker.tick();
      const now = await Promise.all(ids.map(async (id) => (await getPayout(db!, id))!));
      if (now.every((p) => p.status === "confirmed")) break;
      await Promise.all([a.test.mine({ blocks: 1 }), b.test.mine({ blocks: 1 })]);
    }
    const payouts = await Promise.all(ids.map(async (id) => (await getPayout(db!, id))!));
    for (const p of payouts) expect(p).toMatchObject({ status: "confirmed", settleTransferId: expect.any(String) });
    expect(await a.tokenBalance(wallet.address)).toBe(5_000_000n);
    expect(await b.tokenBalance(wallet.address)).toBe(5_000_000n);
    // Gas: each chain's in its own native asset, opened by the worker under the code the settings give.
    const gas = await db.query<{ code: string; chain_id: string; ref: string; debits: string }>(
      `select s.code, s.chain_id::text as chain_id, a.ref, b.debits_posted::text as debits from accounts a join assets s on s.id = a.asset_id
         join account_balances b on b.account_id = a.id where a.ref like 'expense:gas:%' order by s.chain_id`,
    );
    expect(gas.map((g) => [g.code, g.chain_id, g.ref])).toEqual([
      ["ETH-A", "31337", "expense:gas:31337"],
      ["ETH-B", "31338", "expense:gas:31338"],
    ]);
    for (const g of gas) expect(BigInt(g.debits)).toBeGreaterThan(0n);
    expect((await verifyLedger(db)).violations).toEqual([]);

    // Settings that give chain alpha's native token the code the database knows as beta's are
    // refused at start (the service would pay on chain and fail to book it).
    const wrong = new Settlements(loadChains({ CHAINS: settings("ETH-B", "ETH-C") }, env()));
    expect(await settingsConflicts(db, wrong)).toEqual([
      "chain alpha (31337) names its native token ETH-B, but asset ETH-B in the database is the native token of chain 31338: give it another code in the chain settings",
    ]);
  });
});
