import { encodeFunctionData, parseEther } from "viem";
import { afterEach, describe, expect, it } from "vitest";
import { TestStablecoin } from "../../contracts/artifacts.js";
import { freePort } from "../../scripts/anvil-chain.js";
import { openDatabase } from "../../src/db/client.js";
import { createPayout, getPayout } from "../../src/services/payouts.js";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { onRealPostgres, testPooler } from "../support/db.js";
import { payoutWorld, TOKEN, NATIVE, type PayoutWorld } from "../support/payout-world.js";
import { TcpProxy } from "../support/tcp-proxy.js";

let w: PayoutWorld | undefined;
let proxy: TcpProxy | undefined;
afterEach(async () => {
  await proxy?.down();
  await w?.close();
  w = undefined;
  proxy = undefined;
});

const request = (world: PayoutWorld, operatorId: string, asset: string, amount: bigint) =>
  createPayout(world.db, world.settlements, {
    operatorId,
    asset,
    amount,
    trigger: "request",
    requestedBy: "test",
    idempotencyKey: `req-${Math.random()}`,
  }).then((r) => r.payout);

async function attempts(world: PayoutWorld, payoutId: string) {
  return world.db.query<{ hash: string; attempt: number }>(
    "select a.hash, a.attempt from chain_tx_attempts a join payouts p on p.chain_tx_id = a.chain_tx_id where p.id = $1 order by a.attempt",
    [payoutId],
  );
}

/** Paid events of the vault for a payout id, over the whole chain. */
async function paidCount(world: PayoutWorld, payoutId: string): Promise<number> {
  const { PayoutVault } = await import("../../contracts/artifacts.js");
  const { payoutIdToBytes32 } = await import("../../src/domain/payouts.js");
  const logs = await world.chain.public.getContractEvents({
    address: world.chain.vault,
    abi: PayoutVault.abi,
    eventName: "Paid",
    args: { payoutId: payoutIdToBytes32(payoutId) },
    fromBlock: 0n,
  });
  return logs.length;
}

async function expectLedgerSound(world: PayoutWorld) {
  const report = await verifyLedger(world.db);
  expect(report.ok, JSON.stringify(report)).toBe(true);
}

describe("payouts under chain faults", () => {
  it("a transaction that reverts on chain fails its payout, voids the hold and books the gas", async () => {
    w = await payoutWorld();
    const op = await w.operator("op-r", { [TOKEN]: 5_000n });
    const p = await request(w, op.id, TOKEN, 5_000n);
    await w.chain.test.setAutomine(false);
    const worker = w.worker();
    await worker.tick(); // batched, signed, broadcast: waiting in the pool
    expect((await getPayout(w.db, p.id))!.status).toBe("submitted");
    // The token is paused before the payout is mined (paid a higher tip, so it is mined first).
    const fees = await w.chain.public.estimateFeesPerGas();
    const pause = await w.chain.deployerWallet.sendTransaction({
      account: w.chain.deployer,
      chain: w.chain.deployerWallet.chain,
      to: w.chain.token,
      data: encodeFunctionData({ abi: TestStablecoin.abi, functionName: "setPaused", args: [true] }),
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas * 100n,
      maxFeePerGas: fees.maxFeePerGas * 100n,
    });
    await w.chain.test.mine({ blocks: 1 });
    expect((await w.chain.public.getTransactionReceipt({ hash: pause })).status).toBe("success");
    const signerBefore = await w.chain.nativeBalance(w.chain.signer.address);
    const [done] = await w.drive([p.id]);
    expect(done!.status).toBe("failed");
    expect(done!.failureReason).toMatch(/reverted/);
    expect(await w.chain.tokenBalance(op.address)).toBe(0n);
    expect(await w.balance("operator:op-r:payable", TOKEN)).toEqual({ debits: 0n, credits: 5_000n, debitsPending: 0n, creditsPending: 0n });
    const [tx] = await w.db.query<{ status: string; fee: string }>("select status, fee::text as fee from chain_transactions");
    expect(tx!.status).toBe("failed");
    expect(BigInt(tx!.fee)).toBeGreaterThan(0n);
    expect((await w.balance("expense:gas:31337", NATIVE)).debits).toBe(BigInt(tx!.fee));
    expect(signerBefore).toBeGreaterThanOrEqual(await w.chain.nativeBalance(w.chain.signer.address));
    await expectLedgerSound(w);
  });

  it("replaces a transaction that stays unmined with a higher fee under the same nonce, and pays once", async () => {
    w = await payoutWorld({ chainOverrides: { replace_after_seconds: 1 } });
    const op = await w.operator("op-s", { [TOKEN]: 7_000n });
    const p = await request(w, op.id, TOKEN, 7_000n);
    await w.chain.test.setAutomine(false);
    const worker = w.worker();
    await worker.tick();
    const first = await attempts(w, p.id);
    expect(first).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 1_100));
    await worker.tick(); // still unmined after replace_after_seconds: replaced
    const both = await attempts(w, p.id);
    expect(both).toHaveLength(2);
    const txs = await Promise.all(both.map((a) => w!.chain.public.getTransaction({ hash: a.hash as `0x${string}` }).catch(() => null)));
    const replacement = txs[1]!;
    expect(replacement.nonce).toBe(0);
    const original = await w.chain.public.getTransaction({ hash: first[0]!.hash as `0x${string}` }).catch(() => null);
    if (original) expect(replacement.maxFeePerGas!).toBeGreaterThan(original.maxFeePerGas!);
    await w.chain.test.setAutomine(true);
    const [done] = await w.drive([p.id]);
    expect(done!.status).toBe("confirmed");
    expect(done!.txHash).toBe(both[1]!.hash);
    expect(await w.chain.tokenBalance(op.address)).toBe(7_000n);
    expect(await paidCount(w, p.id)).toBe(1);
    await expectLedgerSound(w);
  });

  it("a transaction the node lost, which it would now refuse (fees too low), is replaced under the same nonce", async () => {
    w = await payoutWorld({ chainOverrides: { replace_after_seconds: 1 } });
    const op = await w.operator("op-l", { [TOKEN]: 8_000n });
    const p = await request(w, op.id, TOKEN, 8_000n);
    await w.chain.test.setAutomine(false);
    const worker = w.worker();
    await worker.tick();
    const [first] = await attempts(w, p.id);
    // The node forgets it, and the base fee rises above what it was signed with.
    await w.chain.test.dropTransaction({ hash: first!.hash as `0x${string}` });
    const signed = await w.chain.public.estimateFeesPerGas();
    await w.chain.test.setNextBlockBaseFeePerGas({ baseFeePerGas: signed.maxFeePerGas * 4n });
    await w.chain.test.mine({ blocks: 1 });
    await new Promise((r) => setTimeout(r, 1_100));
    await worker.tick();
    const both = await attempts(w, p.id);
    expect(both).toHaveLength(2);
    await w.chain.test.setAutomine(true);
    const [done] = await w.drive([p.id]);
    expect(done!.status).toBe("confirmed");
    expect(done!.txHash).toBe(both.at(-1)!.hash);
    expect(await w.chain.tokenBalance(op.address)).toBe(8_000n);
    expect(await paidCount(w, p.id)).toBe(1);
    await expectLedgerSound(w);
  });

  it("a reorg that removes a mined transaction before its confirmations: the same bytes are sent again, paid once", async () => {
    w = await payoutWorld({ chainOverrides: { confirmations: 3 } });
    const op = await w.operator("op-g", { [TOKEN]: 9_000n });
    const p = await request(w, op.id, TOKEN, 9_000n);
    const snapshot = await w.chain.test.snapshot();
    const worker = w.worker();
    await worker.tick(); // mined at once (automine) in block B
    const [mined] = await attempts(w, p.id);
    const receipt = await w.chain.public.getTransactionReceipt({ hash: mined!.hash as `0x${string}` });
    expect(receipt.status).toBe("success");
    await w.chain.test.mine({ blocks: 1 });
    await worker.tick(); // 2 of 3 confirmations: not yet
    expect((await getPayout(w.db, p.id))!.status).toBe("submitted");
    expect(await w.chain.tokenBalance(op.address)).toBe(9_000n);
    // The reorg: the chain goes back to before the payout; the transaction is gone.
    await w.chain.test.revert({ id: snapshot });
    expect(await w.chain.tokenBalance(op.address)).toBe(0n);
    await w.chain.test.mine({ blocks: 3 });
    const [done] = await w.drive([p.id]);
    expect(done!.status).toBe("confirmed");
    expect(await attempts(w, p.id)).toHaveLength(1); // never re-signed
    expect(done!.txHash).toBe(mined!.hash);
    expect(await w.chain.tokenBalance(op.address)).toBe(9_000n);
    expect(await paidCount(w, p.id)).toBe(1);
    expect((await w.balance("treasury:31337", TOKEN)).credits).toBe(9_000n);
    await expectLedgerSound(w);
  });

  it("a signer out of gas stops new batches, not the confirmation of those already mined", async () => {
    w = await payoutWorld({ chainOverrides: { confirmations: 3, replace_after_seconds: 1 } });
    const a = await w.operator("gas-a", { [TOKEN]: 1_000n });
    const b = await w.operator("gas-b", { [TOKEN]: 1_000n });
    const p1 = await request(w, a.id, TOKEN, 1_000n);
    const worker = w.worker();
    await worker.tick(); // mined at once, 1 of 3 confirmations
    await w.chain.test.setBalance({ address: w.chain.signer.address, value: 1n });
    const p2 = await request(w, b.id, TOKEN, 1_000n);
    // Three blocks on top of p1's are enough; a few more ticks are allowed for a loaded machine,
    // each one refused for p2. What each tick saw is kept, to say why if p1 is still not confirmed.
    const seen: string[] = [];
    for (let i = 0; i < 10; i++) {
      await w.chain.test.mine({ blocks: 1 });
      const { errors } = await worker.tick();
      expect(errors.length).toBeGreaterThan(0); // the node refuses to estimate or send for p2
      const status = (await getPayout(w.db, p1.id))!.status;
      seen.push(
        `tick ${i}: p1 ${status}; ${errors.map((e) => `${(e as Error).constructor.name}: ${String((e as Error).message).split("\n")[0]}`).join(" | ")}`,
      );
      if (i >= 3 && status === "confirmed") break;
      await new Promise((r) => setTimeout(r, 300));
    }
    const p1Batch = await w.db.query<{ status: string; last_error: string | null }>(
      "select c.status, c.last_error from chain_transactions c join payouts p on p.chain_tx_id = c.id where p.id = $1",
      [p1.id],
    );
    expect((await getPayout(w.db, p1.id))!.status, [...seen, JSON.stringify(p1Batch)].join("\n")).toBe("confirmed");
    expect((await getPayout(w.db, p2.id))!.status).not.toBe("confirmed");
    // Nothing was signed over and over with rising fees while the signer could not pay.
    const signed = await w.db.query<{ n: string }>(
      "select count(*)::text as n from chain_tx_attempts a join payouts p on p.chain_tx_id = a.chain_tx_id where p.id = $1",
      [p2.id],
    );
    expect(Number(signed[0]!.n)).toBeLessThanOrEqual(1);
    await w.chain.test.setBalance({ address: w.chain.signer.address, value: parseEther("10") });
    const [done] = await w.drive([p2.id]);
    expect(done!.status).toBe("confirmed");
    expect(await w.chain.tokenBalance(b.address)).toBe(1_000n);
    await expectLedgerSound(w);
  });

  it("keeps going after the RPC node is unreachable for a while", async () => {
    const port = await freePort();
    w = await payoutWorld({ rpcUrl: () => `http://127.0.0.1:${port}`, chainOverrides: { rpc_timeout_ms: 500 } });
    proxy = new TcpProxy(port, w.chain.port);
    const op = await w.operator("op-u", { [TOKEN]: 3_000n });
    const p1 = await request(w, op.id, TOKEN, 1_000n);
    const worker = w.worker();
    // Down from the start: nothing moves, nothing breaks.
    for (let i = 0; i < 3; i++) {
      const { errors } = await worker.tick();
      expect(errors.length).toBeGreaterThan(0);
    }
    expect((await getPayout(w.db, p1.id))!.status).toBe("pending");
    await proxy.up();
    await worker.tick(); // batched, signed, broadcast
    expect((await getPayout(w.db, p1.id))!.status).toBe("submitted");
    // Cut while waiting for confirmations, and a second payout queued meanwhile.
    await proxy.down();
    const p2 = await request(w, op.id, TOKEN, 2_000n);
    await w.chain.test.mine({ blocks: 3 });
    for (let i = 0; i < 2; i++) await worker.tick();
    expect((await getPayout(w.db, p1.id))!.status).toBe("submitted");
    await proxy.up();
    const done = await w.drive([p1.id, p2.id]);
    expect(done.map((p) => p.status)).toEqual(["confirmed", "confirmed"]);
    expect(await w.chain.tokenBalance(op.address)).toBe(3_000n);
    await expectLedgerSound(w);
  });

  it("two workers racing over the same payouts pay each exactly once", async () => {
    w = await payoutWorld({ chainOverrides: { max_batch_size: 3 } });
    const ops = await Promise.all(Array.from({ length: 8 }, (_, i) => w!.operator(`race-${i}`, { [TOKEN]: 1_000n })));
    const ps = [];
    for (const op of ops) ps.push(await request(w, op.id, TOKEN, 1_000n));
    // On PostgreSQL each worker has its own connection pool, as two processes would.
    const other = onRealPostgres ? await openDatabase({ url: w.db.env.DATABASE_URL!, maxConnections: 5, clock: w.db.clock, pooler: testPooler }) : undefined;
    try {
      const done = await w.drive(
        ps.map((p) => p.id),
        [w.worker(), w.worker({ db: other })],
      );
      expect(done.every((p) => p.status === "confirmed")).toBe(true);
      for (const op of ops) expect(await w.chain.tokenBalance(op.address)).toBe(1_000n);
      for (const p of ps) expect(await paidCount(w, p.id)).toBe(1);
      // Nonces are taken once each, without gaps.
      const nonces = (await w.db.query<{ nonce: string }>("select nonce::text as nonce from chain_transactions where nonce is not null order by nonce")).map(
        (r) => Number(r.nonce),
      );
      expect(nonces).toEqual(nonces.map((_, i) => i));
      expect(await w.chain.public.getTransactionCount({ address: w.chain.signer.address })).toBe(nonces.length);
      expect((await w.balance("treasury:31337", TOKEN)).credits).toBe(8_000n);
      await expectLedgerSound(w);
    } finally {
      await other?.close();
    }
  });
});
