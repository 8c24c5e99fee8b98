import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { encodeFunctionData, parseEther } from "viem";
import { TestStablecoin } from "../../contracts/artifacts.js";
import { chainSettingsFor, startLocalChain, type LocalChain } from "../../scripts/anvil-chain.js";
import { loadChains } from "../../src/chain/config.js";
import { Settlements } from "../../src/chain/settlement.js";
import type { Database } from "../../src/db/client.js";
import type { Clock } from "../../src/domain/clock.js";
import { ensureAccounts } from "../../src/db/ensure-accounts.js";
import { chart, specKey } from "../../src/domain/chart.js";
import { getAssetByCode } from "../../src/db/queries/assets.js";
import { writeTransfers } from "../../src/db/transfer-writer.js";
import { createLogger } from "../../src/log.js";
import { createAsset } from "../../src/services/create-asset.js";
import { registerOperator } from "../../src/services/marketplaces.js";
import { issueAddressChallenge, setPayoutAddress } from "../../src/services/payout-addresses.js";
import { getPayout, type Payout } from "../../src/services/payouts.js";
import { PayoutWorker } from "../../src/workers/payout-worker.js";
import { freshDatabase, type TestDatabase } from "./db.js";

export const TOKEN = "TUSD";
export const NATIVE = "ETH";

/**
 * A database and a local chain wired together: the TUSD (6 decimals, the test stablecoin) and ETH
 * assets, a funded payout vault, and helpers to give operators earnings and verified addresses.
 */
export interface PayoutWorld {
  db: TestDatabase;
  chain: LocalChain;
  settlements: Settlements;
  chainsJson: string;
  env: Record<string, string>;
  worker(options?: { db?: Database; chainOverrides?: Record<string, unknown> }): PayoutWorker;
  /** Registers an operator with a verified address (a fresh key) and `earned` of the asset on its payable. */
  operator(id: string, earned: Record<string, bigint>, account?: PrivateKeyAccount | `0x${string}`): Promise<{ id: string; address: `0x${string}` }>;
  /** Sets the operator's first payout address with its own key (before anything is owed to it). */
  payTo(id: string, account?: PrivateKeyAccount | `0x${string}`): Promise<`0x${string}`>;
  credit(operatorId: string, asset: string, amount: bigint): Promise<void>;
  /** Ticks the worker (or workers) and mines a block between ticks until every payout is final. */
  drive(ids: string[], workers?: PayoutWorker[], maxRounds?: number): Promise<Payout[]>;
  balance(ref: string, asset: string): Promise<{ debits: bigint; credits: bigint; debitsPending: bigint; creditsPending: bigint }>;
  close(): Promise<void>;
}

export async function payoutWorld(
  options: { chainOverrides?: Record<string, unknown>; rpcUrl?: (chain: LocalChain) => string; clock?: Clock } = {},
): Promise<PayoutWorld> {
  const chain = await startLocalChain();
  const db = await freshDatabase({ clock: options.clock });
  const env = { TREASURY_SIGNER_KEY: chain.signerKey };
  const settingsJson = (overrides: Record<string, unknown> = {}) =>
    JSON.stringify([
      chainSettingsFor(chain, {
        ...(options.rpcUrl ? { rpc_urls: [options.rpcUrl(chain)] } : {}),
        ...options.chainOverrides,
        ...overrides,
      }),
    ]);
  const chainsJson = settingsJson();
  const settlements = new Settlements(loadChains({ CHAINS: chainsJson }, env));
  await createAsset(db, { code: TOKEN, scale: 6, settlement: { kind: "erc20", chainId: 31337, tokenAddress: chain.token } });
  await createAsset(db, { code: NATIVE, scale: 18, settlement: { kind: "native", chainId: 31337 } });
  // The treasury: 1,000,000 TUSD and 100 ETH in the vault.
  await chain.send({ to: chain.token, data: encodeFunctionData({ abi: TestStablecoin.abi, functionName: "mint", args: [chain.vault, 1_000_000_000_000n] }) });
  await chain.send({ to: chain.vault, value: parseEther("100") });
  const log = createLogger("silent");

  const world: PayoutWorld = {
    db,
    chain,
    settlements,
    chainsJson,
    env,
    worker: (o = {}) =>
      new PayoutWorker(o.db ?? db, o.chainOverrides ? new Settlements(loadChains({ CHAINS: settingsJson(o.chainOverrides) }, env)) : settlements, { log }),
    async credit(operatorId, assetCode, amount) {
      const asset = (await getAssetByCode(db, assetCode))!;
      const funding = {
        assetId: asset.id,
        marketplaceId: null,
        ref: "test:funding",
        code: "test_funding",
        ownerType: "platform",
        ownerId: "test",
        normalSide: "debit" as const,
      };
      const payable = chart.operatorPayable(asset.id, operatorId);
      const [r] = await writeTransfers(db, async (tx) => {
        const ids = await ensureAccounts(tx, [funding, payable]);
        return [
          {
            kind: "standard",
            idempotencyKey: `test-credit:${operatorId}:${assetCode}:${amount}:${Math.random()}`,
            legs: [{ debitAccountId: ids.get(specKey(funding))!, creditAccountId: ids.get(specKey(payable))!, amount }],
          },
        ];
      });
      if (!r!.ok) throw r!.error;
    },
    async operator(id, earned, account) {
      await registerOperator(db, { id, name: id });
      const address = await world.payTo(id, account);
      for (const [asset, amount] of Object.entries(earned)) await world.credit(id, asset, amount);
      return { id, address };
    },
    async payTo(id, account) {
      if (typeof account === "string") {
        // An address nobody holds a key for (a contract): set directly, as an admin could not.
        // Recorded as a proven change (its challenge used, in its history), as verify expects of every address paid to.
        await db.query(
          "insert into payout_address_challenges (id, operator_id, chain_id, address, message, expires_at, used_at) values (gen_random_uuid(), $1, 31337, $2, 'test', now(), now())",
          [id, account.toLowerCase()],
        );
        await db.query(
          "insert into payout_addresses (operator_id, chain_id, address, challenge_id, verified_at) select $1, 31337, $2, id, now() from payout_address_challenges where operator_id = $1",
          [id, account.toLowerCase()],
        );
        await db.query(
          `insert into payout_address_events (operator_id, chain_id, new_address, challenge_id, signature, changed_by)
           select $1, 31337, $2, id, '0x', 'test' from payout_address_challenges where operator_id = $1`,
          [id, account.toLowerCase()],
        );
        return account.toLowerCase() as `0x${string}`;
      }
      const acct = account ?? privateKeyToAccount(generatePrivateKey());
      const ch = await issueAddressChallenge(db, settlements, { operatorId: id, chainId: 31337n, address: acct.address, now: db.clock.now() });
      await setPayoutAddress(db, settlements, {
        operatorId: id,
        chainId: 31337n,
        address: acct.address,
        challengeId: ch.id,
        signature: await acct.signMessage({ message: ch.message }),
        by: { keyId: "test", role: "operator", scopeId: id },
      });
      return acct.address.toLowerCase() as `0x${string}`;
    },
    async drive(ids, workers, maxRounds = 40) {
      const ws = workers ?? [world.worker()];
      for (let round = 0; round < maxRounds; round++) {
        await Promise.all(ws.map((w) => w.tick()));
        const now = await Promise.all(ids.map(async (id) => (await getPayout(db, id))!));
        if (now.every((p) => p.status === "confirmed" || p.status === "failed")) return now;
        await chain.test.mine({ blocks: 1 });
      }
      throw new Error(
        `payouts not final after ${maxRounds} rounds: ${JSON.stringify((await Promise.all(ids.map((id) => getPayout(db, id)))).map((p) => [p!.id, p!.status, p!.note]))}`,
      );
    },
    async balance(ref, assetCode) {
      const asset = (await getAssetByCode(db, assetCode))!;
      const rows = await db.query<{ d: string; c: string; dp: string; cp: string }>(
        `select b.debits_posted::text as d, b.credits_posted::text as c, b.debits_pending::text as dp, b.credits_pending::text as cp
           from accounts a join account_balances b on b.account_id = a.id where a.asset_id = $1 and a.ref = $2 and a.marketplace_id is null`,
        [asset.id, ref],
      );
      const r = rows[0] ?? { d: "0", c: "0", dp: "0", cp: "0" };
      return { debits: BigInt(r.d), credits: BigInt(r.c), debitsPending: BigInt(r.dp), creditsPending: BigInt(r.cp) };
    },
    async close() {
      await chain.stop();
      await db.destroy();
    },
  };
  return world;
}
