import { encodeFunctionData, parseEther } from "viem";
import { afterEach, describe, expect, it } from "vitest";
import { createAccount } from "../../src/services/create-account.js";
import { PayoutVault, TestStablecoin } from "../../contracts/artifacts.js";
import { ensureAccounts } from "../../src/db/ensure-accounts.js";
import { specKey } from "../../src/domain/chart.js";
import { getAssetByCode } from "../../src/db/queries/assets.js";
import { depositAddressMessage, payoutIdToBytes32 } from "../../src/domain/payouts.js";
import { createCustomer, createMarketplace } from "../../src/services/marketplaces.js";
import { createPayout } from "../../src/services/payouts.js";
import { registerDepositAddress, scanDeposits } from "../../src/services/chain-deposits.js";
import { getReconciliation, listItems, resolveItem, runReconciliation, treasuryCheck } from "../../src/services/reconcile.js";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { payoutWorld, TOKEN, type PayoutWorld } from "../support/payout-world.js";

let w: PayoutWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

let n = 0;
const pay = async (world: PayoutWorld, operatorId: string, amount: bigint) =>
  (
    await createPayout(world.db, world.settlements, {
      operatorId,
      asset: TOKEN,
      amount,
      trigger: "request",
      requestedBy: "test",
      idempotencyKey: `r-${++n}-${Math.random()}`,
    })
  ).payout.id;

/** A run up to the last final block (2 confirmations), after burying what happened under 2 blocks. */
const run = async (world: PayoutWorld, fromBlock: bigint, toBlock?: bigint) => {
  if (toBlock === undefined) await world.chain.test.mine({ blocks: 2 });
  const id = await runReconciliation(world.db, world.settlements, {
    chainId: 31337n,
    asset: TOKEN,
    fromBlock,
    toBlock: toBlock ?? (await world.chain.public.getBlockNumber()) - 1n,
    requestedBy: "test",
  });
  return { run: (await getReconciliation(world.db, id))!, items: await listItems(world.db, id, { limit: 1000 }) };
};

describe("reconciling ledger payouts with the chain", () => {
  it("a clean range is all matched, and a rerun gives the same answer", async () => {
    w = await payoutWorld({ chainOverrides: { log_chunk_blocks: 3 } });
    const start = (await w.chain.public.getBlockNumber()) + 1n; // after the treasury was funded
    const ops = await Promise.all(["a", "b", "c"].map((id) => w!.operator(`rec-${id}`, { [TOKEN]: 1_000_000n })));
    const ids = [];
    for (const op of ops) ids.push(await pay(w, op.id, 250_000n));
    await w.drive(ids);
    // Spread over many blocks, so the reader must go chunk by chunk.
    await w.chain.test.mine({ blocks: 10 });
    const first = await run(w, start);
    expect(first.run.summary).toEqual({ matched: 3, missing_on_chain: 0, unexpected_on_chain: 0, amount_mismatch: 0, recipient_mismatch: 0 });
    expect(first.items.map((i) => i.payout_id).sort()).toEqual([...ids].sort());
    const again = await run(w, start, first.run.toBlock);
    const strip = (items: typeof first.items) => items.map(({ id: _id, ...rest }) => rest);
    expect(strip(again.items)).toEqual(strip(first.items));
  });

  it("names a payment made outside the service, a payout recorded but never sent, and a wrong amount", async () => {
    w = await payoutWorld();
    const start = (await w.chain.public.getBlockNumber()) + 1n;
    const ops = await Promise.all(["x", "y", "z"].map((id) => w!.operator(`bad-${id}`, { [TOKEN]: 1_000_000n })));
    const ok = await pay(w, ops[0]!.id, 100_000n);
    const wrong = await pay(w, ops[1]!.id, 200_000n);
    await w.drive([ok, wrong]);
    // The ledger's record of one payout says another amount than was paid (edited by someone who
    // can turn the payouts table's trigger off).
    await w.db.query("alter table payouts disable trigger payouts_money_fixed");
    await w.db.query("update payouts set amount = 200001 where id = $1", [wrong]);
    await w.db.query("alter table payouts enable trigger payouts_money_fixed");
    // A payout the ledger marks paid in a block of the range, with no payment on chain.
    const ghost = await pay(w, ops[2]!.id, 300_000n);
    const head = await w.chain.public.getBlockNumber();
    await w.db.query("update payouts set status = 'confirmed', tx_hash = $2, block_number = $3, log_index = 0 where id = $1", [
      ghost,
      `0x${"ab".repeat(32)}`,
      head.toString(),
    ]);
    // The signer's key used outside the service to pay from the vault.
    const outsider = privateKeyToAccount(generatePrivateKey()).address;
    await w.chain.wallet(w.chain.signer).writeContract({
      address: w.chain.vault,
      abi: PayoutVault.abi,
      functionName: "payToken",
      chain: w.chain.deployerWallet.chain,
      account: w.chain.signer,
      args: [w.chain.token, [payoutIdToBytes32("0194e0a0-0000-7000-8000-000000000001")], [outsider], [55_000n]],
    });
    const { run: r, items } = await run(w, start);
    expect(r.summary).toEqual({ matched: 1, missing_on_chain: 1, unexpected_on_chain: 1, amount_mismatch: 1, recipient_mismatch: 0 });
    expect(items.find((i) => i.status === "amount_mismatch")).toMatchObject({ payout_id: wrong, ledger_amount: "200001", chain_amount: "200000" });
    expect(items.find((i) => i.status === "missing_on_chain")).toMatchObject({ payout_id: ghost, ledger_amount: "300000", chain_amount: null });
    expect(items.find((i) => i.status === "unexpected_on_chain")).toMatchObject({
      payout_id: null,
      chain_amount: "55000",
      chain_address: outsider.toLowerCase(),
    });
  });

  it("credits a customer's deposit from its registered address once, and finance resolves an unknown inflow with an adjusting transfer", async () => {
    w = await payoutWorld();
    const asset = (await getAssetByCode(w.db, TOKEN))!;
    await createMarketplace(w.db, { id: "mk", name: "mk" });
    await createCustomer(w.db, { marketplaceId: "mk", id: "buyer", billing: "prepaid" });
    const payer = privateKeyToAccount(generatePrivateKey());
    await w.chain.test.setBalance({ address: payer.address, value: parseEther("1") });
    await w.chain.send({ to: w.chain.token, data: encodeFunctionData({ abi: TestStablecoin.abi, functionName: "mint", args: [payer.address, 5_000_000n] }) });
    const signature = await payer.signMessage({
      message: depositAddressMessage({ marketplaceId: "mk", customerId: "buyer", chainId: 31337n, address: payer.address }),
    });
    // Someone else's signature does not register it.
    await expect(
      registerDepositAddress(w.db, w.settlements, {
        marketplaceId: "mk",
        customerId: "buyer",
        chainId: 31337n,
        address: w.chain.deployer.address,
        signature,
        createdBy: "test",
      }),
    ).rejects.toMatchObject({ code: "signature_invalid" });
    await registerDepositAddress(w.db, w.settlements, {
      marketplaceId: "mk",
      customerId: "buyer",
      chainId: 31337n,
      address: payer.address,
      signature,
      createdBy: "test",
    });
    await w.chain.wallet(payer).writeContract({
      address: w.chain.token,
      abi: TestStablecoin.abi,
      functionName: "transfer",
      args: [w.chain.vault, 4_000_000n],
      chain: w.chain.deployerWallet.chain,
      account: payer,
    });
    await w.chain.test.mine({ blocks: 2 });
    const chain = w.settlements.chains[0]!;
    await scanDeposits(w.db, chain, [asset]);
    await scanDeposits(w.db, chain, [asset]);
    const { run: r, items } = await run(w, 0n);
    // Read three times (two scans and the run): credited once.
    expect(await w.db.query("select * from chain_deposits")).toHaveLength(1);
    const buyer = await w.db.query<{ c: string }>(
      "select b.credits_posted::text as c from accounts a join account_balances b on b.account_id = a.id where a.ref = 'customer:buyer'",
    );
    expect(buyer[0]!.c).toBe("4000000");
    expect(items.find((i) => i.direction === "in" && i.status === "matched")).toMatchObject({
      chain_amount: "4000000",
      detail: "deposit of customer mk/buyer",
    });
    // The treasury's funding (minted into the vault) is an inflow no customer explains.
    const funding = items.find((i) => i.direction === "in" && i.status === "unexpected_on_chain")!;
    expect(funding.chain_amount).toBe("1000000000000");
    expect(r.summary.unexpected_on_chain).toBe(1);

    // Before: the ledger knows the deposit, not the funding.
    let check = await treasuryCheck(w.db, w.settlements, 31337n, TOKEN);
    expect(check.unexplained).toBe(1_000_000_000_000n);
    // Equity is an account of the platform's books that an admin opens; the treasury is the service's.
    const equity = await createAccount(w.db, {
      assetId: asset.id,
      ref: "equity:treasury_funding",
      code: "equity",
      ownerType: "platform",
      ownerId: "treasury",
      normalSide: "credit",
    });
    const treasury = {
      assetId: asset.id,
      marketplaceId: null,
      ref: "treasury:31337",
      code: "treasury",
      ownerType: "platform",
      ownerId: "treasury",
      normalSide: "debit" as const,
    };
    const acc = await ensureAccounts(w.db, [treasury]);
    const adjust = (itemId: string, debitAccountId: string, creditAccountId: string, amount: bigint) =>
      resolveItem(w!.db, {
        runId: r.id,
        itemId: BigInt(itemId),
        note: "try",
        resolvedBy: "finance-key",
        adjustment: { debitAccountId, creditAccountId, amount },
      });
    // An adjustment corrects the item's discrepancy and nothing else (each refusal writes nothing).
    const payable = (await w.db.query<{ id: string }>("select id from accounts where ref = 'customer:buyer' and opened_by_service"))[0]!.id; // one of the service's
    const matched = items.find((i) => i.status === "matched");
    if (matched)
      await expect(adjust(matched.id, acc.get(specKey(treasury))!, equity.id, 1n)).rejects.toMatchObject({
        code: "invalid_request",
        message: expect.stringMatching(/matched/),
      });
    await expect(adjust(funding.id, acc.get(specKey(treasury))!, payable, 5n)).rejects.toMatchObject({
      code: "invalid_request",
      issues: [{ path: "adjustment.credit_account_id" }],
    });
    await expect(adjust(funding.id, equity.id, payable, 5n)).rejects.toMatchObject({ code: "invalid_request" });
    await expect(adjust(funding.id, acc.get(specKey(treasury))!, equity.id, 1_000_000_000_001n)).rejects.toMatchObject({
      code: "invalid_request",
      issues: [{ path: "adjustment.amount" }],
    });
    // A second run over the same range before the adjustment: it sees the inflow unexplained too.
    const { run: again, items: againItems } = await run(w, 0n);
    const resolved = await resolveItem(w.db, {
      runId: r.id,
      itemId: BigInt(funding.id),
      note: "initial treasury funding",
      resolvedBy: "finance-key",
      adjustment: { debitAccountId: acc.get(specKey(treasury))!, creditAccountId: equity.id, amount: 1_000_000_000_000n },
    });
    expect(resolved).toMatchObject({ resolution_note: "initial treasury funding", resolved_by: "finance-key", adjustment_transfer_id: expect.any(String) });
    await expect(resolveItem(w.db, { runId: r.id, itemId: BigInt(funding.id), note: "again", resolvedBy: "x" })).rejects.toMatchObject({
      code: "item_already_resolved",
    });
    check = await treasuryCheck(w.db, w.settlements, 31337n, TOKEN);
    expect(check.unexplained).toBe(0n);
    expect((await verifyLedger(w.db)).ok).toBe(true);

    // The second run (made before the adjustment) shows the same inflow as an item of its own:
    // adjusting it too would book the treasury's funding twice. Refused, naming the first adjustment; a note settles it.
    const same = againItems.find((i) => i.direction === "in" && i.status === "unexpected_on_chain")!;
    expect(same.tx_hash).toBe(funding.tx_hash);
    const twice = resolveItem(w.db, {
      runId: again.id,
      itemId: BigInt(same.id),
      note: "initial treasury funding, again",
      resolvedBy: "finance-key",
      adjustment: { debitAccountId: acc.get(specKey(treasury))!, creditAccountId: equity.id, amount: 1_000_000_000_000n },
    });
    await expect(twice).rejects.toMatchObject({
      code: "item_already_resolved",
      message: expect.stringMatching(new RegExp(`adjusted already, by item ${funding.id} `)),
    });
    expect((await treasuryCheck(w.db, w.settlements, 31337n, TOKEN)).unexplained).toBe(0n);
    await resolveItem(w.db, { runId: again.id, itemId: BigInt(same.id), note: "adjusted in the first run", resolvedBy: "finance-key" });
    // A run after the adjustment finds the inflow in the books: matched, naming the adjusted item.
    const { items: afterItems } = await run(w, 0n);
    expect(afterItems.find((i) => i.direction === "in" && i.tx_hash === funding.tx_hash)).toMatchObject({
      status: "matched",
      detail: `recorded by the adjustment of reconciliation item ${funding.id}`,
    });
    expect((await verifyLedger(w.db)).ok).toBe(true);
  });

  it("the treasury check explains payouts in flight", async () => {
    w = await payoutWorld({ chainOverrides: { confirmations: 5 } });
    const asset = (await getAssetByCode(w.db, TOKEN))!;
    // Record the funding first, so that the ledger's treasury starts equal to the chain.
    const spec = {
      assetId: asset.id,
      marketplaceId: null,
      ref: "equity:treasury_funding",
      code: "equity",
      ownerType: "platform",
      ownerId: "treasury",
      normalSide: "credit" as const,
    };
    const treasury = {
      assetId: asset.id,
      marketplaceId: null,
      ref: "treasury:31337",
      code: "treasury",
      ownerType: "platform",
      ownerId: "treasury",
      normalSide: "debit" as const,
    };
    const acc = await ensureAccounts(w.db, [spec, treasury]);
    const { writeTransfers } = await import("../../src/db/transfer-writer.js");
    await writeTransfers(w.db, [
      {
        kind: "standard",
        idempotencyKey: "funding",
        legs: [{ debitAccountId: acc.get(specKey(treasury))!, creditAccountId: acc.get(specKey(spec))!, amount: 1_000_000_000_000n }],
      },
    ]);
    const op = await w.operator("fly", { [TOKEN]: 1_000_000n });
    const id = await pay(w, op.id, 600_000n);
    await w.worker().tick(); // mined at once (automine), 1 of 5 confirmations
    const check = await treasuryCheck(w.db, w.settlements, 31337n, TOKEN);
    expect(check.inFlight).toMatchObject({ payouts: 1, amount: 600_000n, minedAmount: 600_000n });
    expect(check.onChain.total).toBe(1_000_000_000_000n - 600_000n);
    expect(check.ledger).toBe(1_000_000_000_000n);
    expect(check.unexplained).toBe(0n);
    await w.drive([id]);
    const after = await treasuryCheck(w.db, w.settlements, 31337n, TOKEN);
    expect(after).toMatchObject({ ledger: 1_000_000_000_000n - 600_000n, inFlight: { payouts: 0 }, unexplained: 0n });
  });
});
