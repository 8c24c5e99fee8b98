import { parseEther } from "viem";
import { afterEach, describe, expect, it } from "vitest";
import { createPayout, getPayout } from "../../src/services/payouts.js";
import { NATIVE, payoutWorld, TOKEN, type PayoutWorld } from "../support/payout-world.js";

let w: PayoutWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

let keyN = 0;
const request = (world: PayoutWorld, operatorId: string, asset: string, amount: bigint) =>
  createPayout(world.db, world.settlements, {
    operatorId,
    asset,
    amount,
    trigger: "request",
    requestedBy: "test",
    idempotencyKey: `req-${++keyN}-${Math.random()}`,
  }).then((r) => r.payout);

describe("payouts on a local chain", () => {
  it("pays ERC-20 payouts of several operators in one batch; chain and ledger agree", async () => {
    w = await payoutWorld();
    const ops = await Promise.all(["op-a", "op-b", "op-c"].map((id) => w!.operator(id, { [TOKEN]: 100_000_000n })));
    const amounts = [12_345_678n, 1n, 99_999_999n];
    const payouts = [];
    for (const [i, op] of ops.entries()) payouts.push(await request(w, op.id, TOKEN, amounts[i]!));
    expect(payouts.every((p) => p.status === "pending")).toBe(true);
    // The hold: the payable's available balance is reduced at once.
    expect((await w.balance("operator:op-a:payable", TOKEN)).debitsPending).toBe(12_345_678n);

    const vaultBefore = await w.chain.tokenBalance(w.chain.vault);
    const signerBefore = await w.chain.nativeBalance(w.chain.signer.address);
    const done = await w.drive(payouts.map((p) => p.id));
    expect(done.map((p) => p.status)).toEqual(["confirmed", "confirmed", "confirmed"]);
    expect(new Set(done.map((p) => p.txHash)).size).toBe(1); // one transaction for the batch
    for (const [i, op] of ops.entries()) expect(await w.chain.tokenBalance(op.address)).toBe(amounts[i]);
    const total = amounts.reduce((a, b) => a + b);
    expect(vaultBefore - (await w.chain.tokenBalance(w.chain.vault))).toBe(total);

    // Ledger: holds posted, payables debited, in transit cleared, treasury credited by what left the vault.
    const a = await w.balance("operator:op-a:payable", TOKEN);
    expect(a).toEqual({ debits: 12_345_678n, credits: 100_000_000n, debitsPending: 0n, creditsPending: 0n });
    const transit = await w.balance("payouts:in_transit:31337", TOKEN);
    expect(transit.credits - transit.debits).toBe(0n);
    expect((await w.balance("treasury:31337", TOKEN)).credits).toBe(total);
    // Gas: booked in ETH as an expense, exactly what the signer spent.
    const spent = signerBefore - (await w.chain.nativeBalance(w.chain.signer.address));
    expect(spent).toBeGreaterThan(0n);
    expect((await w.balance("expense:gas:31337", NATIVE)).debits).toBe(spent);
    expect((await w.balance("treasury:31337", NATIVE)).credits).toBe(spent);
    // Each payout names its event.
    const logIndexes = done.map((p) => p.logIndex);
    expect(new Set(logIndexes).size).toBe(3);
  });

  it("pays native-token payouts", async () => {
    w = await payoutWorld();
    const op = await w.operator("op-n", { [NATIVE]: parseEther("5") });
    const p = await request(w, op.id, NATIVE, parseEther("1.5"));
    const [done] = await w.drive([p.id]);
    expect(done!.status).toBe("confirmed");
    expect(await w.chain.nativeBalance(op.address)).toBe(parseEther("1.5"));
    expect(await w.chain.nativeBalance(w.chain.vault)).toBe(parseEther("98.5"));
    expect(await w.balance("operator:op-n:payable", NATIVE)).toEqual({
      debits: parseEther("1.5"),
      credits: parseEther("5"),
      debitsPending: 0n,
      creditsPending: 0n,
    });
  });

  it("isolates a recipient that refuses the native token and pays the rest of the batch", async () => {
    w = await payoutWorld();
    const rejecting = await w.chain.deployRejectsNative();
    const good1 = await w.operator("good-1", { [NATIVE]: parseEther("1") });
    const bad = await w.operator("bad", { [NATIVE]: parseEther("1") }, rejecting);
    const good2 = await w.operator("good-2", { [NATIVE]: parseEther("1") });
    const ps = [await request(w, good1.id, NATIVE, 100n), await request(w, bad.id, NATIVE, 200n), await request(w, good2.id, NATIVE, 300n)];
    const done = await w.drive(ps.map((p) => p.id));
    expect(done.map((p) => p.status)).toEqual(["confirmed", "failed", "confirmed"]);
    expect(done[1]!.failureReason).toMatch(/cannot be paid/);
    expect(await w.chain.nativeBalance(good1.address)).toBe(100n);
    expect(await w.chain.nativeBalance(good2.address)).toBe(300n);
    expect(await w.chain.nativeBalance(rejecting)).toBe(0n);
    // The failed payout's hold is voided: the operator's funds are available again.
    expect(await w.balance("operator:bad:payable", NATIVE)).toEqual({ debits: 0n, credits: parseEther("1"), debitsPending: 0n, creditsPending: 0n });
    expect(done[0]!.txHash).toBe(done[2]!.txHash);
  });

  it("refuses a payout above the available balance and one without a verified address", async () => {
    w = await payoutWorld();
    await w.operator("op-x", { [TOKEN]: 1000n });
    await expect(request(w, "op-x", TOKEN, 1001n)).rejects.toMatchObject({ code: "exceeds_credits" });
    await request(w, "op-x", TOKEN, 600n);
    await expect(request(w, "op-x", TOKEN, 401n)).rejects.toMatchObject({ code: "exceeds_credits" });
    const { registerOperator } = await import("../../src/services/marketplaces.js");
    await registerOperator(w.db, { id: "no-address", name: "n" });
    await w.credit("no-address", TOKEN, 10n);
    await expect(request(w, "no-address", TOKEN, 5n)).rejects.toMatchObject({ code: "payout_address_missing" });
    expect(await getPayout(w.db, "00000000-0000-7000-8000-000000000000")).toBeUndefined();
  });
});

describe("payouts the worker refuses to send", () => {
  it("an asset whose scale is not the token's decimals waits with the reason, and nothing is sent", async () => {
    w = await payoutWorld();
    const { createAsset } = await import("../../src/services/create-asset.js");
    // A 6-decimal token registered with scale 18: paying its ledger amounts as token units would be wrong.
    const token = await w.chain.deployStablecoin();
    await createAsset(w.db, { code: "TUSD18", scale: 18, settlement: { kind: "erc20", chainId: 31337, tokenAddress: token } });
    const op = await w.operator("op-d", { TUSD18: 10n ** 18n });
    const p = await request(w, op.id, "TUSD18", 10n ** 18n);
    const worker = w.worker();
    await worker.tick();
    await worker.tick();
    const now = (await getPayout(w.db, p.id))!;
    expect(now.status).toBe("pending");
    expect(now.note).toMatch(/scale 18 .* 6 decimals/);
    expect(await w.chain.public.getTransactionCount({ address: w.chain.signer.address })).toBe(0);
  });

  it("when the chain's settings list its assets, only those are paid out, and they must match the ledger's", async () => {
    const world = await payoutWorld({
      chainOverrides: {
        assets: [
          { code: "ETH", decimals: 18 },
          { code: TOKEN, token: `0x${"99".repeat(20)}`, decimals: 6 },
        ],
      },
    });
    w = world;
    const op = await world.operator("op-listed", { [TOKEN]: 100n, [NATIVE]: 100n });
    await expect(request(world, op.id, TOKEN, 10n)).rejects.toMatchObject({
      code: "chain_not_configured",
      message: expect.stringMatching(/differs from the chain's settings/),
    });
    expect((await request(world, op.id, NATIVE, 10n)).status).toBe("pending");
    const { createAsset } = await import("../../src/services/create-asset.js");
    await createAsset(world.db, { code: "OTHER", scale: 6, settlement: { kind: "erc20", chainId: 31337, tokenAddress: await world.chain.deployStablecoin() } });
    await world.credit(op.id, "OTHER", 5n);
    await expect(request(world, op.id, "OTHER", 5n)).rejects.toMatchObject({
      code: "chain_not_configured",
      message: expect.stringMatching(/not among the assets/),
    });
  });

  it("a vault that is not the signer's: nothing is signed", async () => {
    w = await payoutWorld({ chainOverrides: { vault: `0x${"66".repeat(20)}` } });
    const op = await w.operator("op-v", { [TOKEN]: 100n });
    const p = await request(w, op.id, TOKEN, 100n);
    const { errors } = await w.worker().tick();
    expect(String(errors[0])).toMatch(/no contract at vault/);
    expect((await getPayout(w.db, p.id))!.status).toBe("pending");
    expect(await w.db.query("select * from chain_transactions")).toEqual([]);
  });
});
