import { encodeFunctionData, parseEther } from "viem";
import { afterEach, describe, expect, it } from "vitest";
import { TestStablecoin } from "../../contracts/artifacts.js";
import { createMetrics } from "../../src/http/metrics.js";
import { createPayout, getPayout } from "../../src/services/payouts.js";
import { treasuryCheck } from "../../src/services/reconcile.js";
import { NATIVE, payoutWorld, TOKEN, type PayoutWorld } from "../support/payout-world.js";

let w: PayoutWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

let keyN = 0;
const request = (world: PayoutWorld, operatorId: string, asset: string, amount: bigint) =>
  createPayout(world.db, world.settlements, { operatorId, asset, amount, trigger: "request", requestedBy: "test", idempotencyKey: `short-${++keyN}` }).then(
    (r) => r.payout,
  );

/** Ticks and mines until `id` is confirmed or `rounds` pass; returns its states seen. */
async function tickUntil(world: PayoutWorld, ids: string[], until: (statuses: string[]) => boolean, rounds = 30) {
  const worker = world.worker();
  for (let i = 0; i < rounds; i++) {
    await worker.tick();
    const now = await Promise.all(ids.map(async (id) => (await getPayout(world.db, id))!));
    if (until(now.map((p) => p.status))) return now;
    await world.chain.test.mine({ blocks: 1 });
  }
  return Promise.all(ids.map(async (id) => (await getPayout(world.db, id))!));
}

describe("a short vault: payouts wait for funds, never fail for it", () => {
  it("of two payouts the vault holds 1.5 of, one is paid and the other waits with the reason, then is paid once the vault is funded", async () => {
    w = await payoutWorld(); // the vault holds 1,000,000 TUSD
    const a = await w.operator("short-a", { [TOKEN]: 700_000_000_000n });
    const b = await w.operator("short-b", { [TOKEN]: 700_000_000_000n });
    const pa = await request(w, a.id, TOKEN, 650_000_000_000n);
    const pb = await request(w, b.id, TOKEN, 650_000_000_000n);
    const [first, second] = await tickUntil(w, [pa.id, pb.id], ([s]) => s === "confirmed");
    expect(first!.status).toBe("confirmed");
    expect(second).toMatchObject({ status: "pending", note: expect.stringMatching(/^waiting for funds: the vault can pay \d+ TUSD on chain 31337/) });
    // More ticks change nothing while the vault is short: it still waits, and is not failed.
    const [still] = await tickUntil(w, [pb.id], () => false, 3);
    expect(still!.status).toBe("pending");
    expect(await w.chain.tokenBalance(b.address)).toBe(0n);
    // Whoever runs the service sees it: /metrics counts it, the treasury check says by how much to fund.
    const metrics = createMetrics(w.db);
    expect(await metrics.registry.metrics()).toMatch(/payouts_waiting_for_funds\{chain_id="31337",asset="TUSD"\} 1/);
    const check = await treasuryCheck(w.db, w.settlements, 31337n, TOKEN);
    expect(check.pending).toEqual({ payouts: 1, amount: 650_000_000_000n, shortfall: 300_000_000_000n });

    // The vault is funded: the waiting payout is paid.
    await w.chain.send({
      to: w.chain.token,
      data: encodeFunctionData({ abi: TestStablecoin.abi, functionName: "mint", args: [w.chain.vault, 500_000_000_000n] }),
    });
    const [paid] = await tickUntil(w, [pb.id], ([s]) => s === "confirmed");
    expect(paid).toMatchObject({ status: "confirmed", note: null });
    expect(await w.chain.tokenBalance(b.address)).toBe(650_000_000_000n);
    const events = await w.db.query<{ status: string }>("select status from payout_events where payout_id = $1 order by id", [pb.id]);
    expect(events.map((e) => e.status)).not.toContain("failed");
  });

  it("a payout larger than the vault waits without holding back smaller ones asked for after it", async () => {
    w = await payoutWorld(); // 1,000,000 TUSD
    const big = await w.operator("big", { [TOKEN]: 2_000_000_000_000n });
    const small = await w.operator("small", { [TOKEN]: 10_000_000n });
    const pBig = await request(w, big.id, TOKEN, 1_500_000_000_000n);
    const pSmall = await request(w, small.id, TOKEN, 10_000_000n);
    const [b, s] = await tickUntil(w, [pBig.id, pSmall.id], ([, x]) => x === "confirmed");
    expect(s!.status).toBe("confirmed");
    expect(b).toMatchObject({ status: "pending", note: expect.stringMatching(/^waiting for funds/) });
  });

  it("native payouts beyond the vault's balance wait too", async () => {
    w = await payoutWorld(); // 100 ETH in the vault
    const op = await w.operator("short-n", { [NATIVE]: parseEther("150") });
    const p = await request(w, op.id, NATIVE, parseEther("120"));
    const [waiting] = await tickUntil(w, [p.id], () => false, 3);
    expect(waiting).toMatchObject({ status: "pending", note: expect.stringMatching(/^waiting for funds/) });
    await w.chain.send({ to: w.chain.vault, value: parseEther("30") });
    const [paid] = await tickUntil(w, [p.id], ([s]) => s === "confirmed");
    expect(paid!.status).toBe("confirmed");
    expect(await w.chain.nativeBalance(op.address)).toBe(parseEther("120"));
  });
});
