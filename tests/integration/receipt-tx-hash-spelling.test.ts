import { parseEther, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { afterEach, describe, expect, it } from "vitest";
import { depositAddressMessage } from "../../src/domain/payouts.js";
import { referenceKey, txHashesIn } from "../../src/domain/references.js";
import { listAssets } from "../../src/db/queries/assets.js";
import { recheckRejectedReceipts } from "../../src/services/chain-deposits.js";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { fundingWorld, payVault, USD, type FundingWorld } from "../support/funding-world.js";
import { expectStatus } from "../support/http.js";

let world: FundingWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

/**
 * Money received on chain enters the ledger once: credited to a customer by the deposit scanner,
 * or recorded by finance as a receipt that names the transaction. The two were matched by the
 * receipt's reference being exactly the hash (0x and 64 digits): the same payment given as a
 * receipt with its hash spelled otherwise ("Base tx 0x…", without 0x, in capitals) was counted
 * twice, and operators were paid from money that came in once.
 */
async function world2(): Promise<{ s: FundingWorld; x: PrivateKeyAccount }> {
  const s = (world = await fundingWorld());
  // Claimed deposits spent on usage of o (customer c) and o2 (customer d): 2,000 TUSD owed, nothing received.
  await s.deposit("c", 1_000n * USD);
  await s.deposit("d", 1_000n * USD);
  await s.usage("o", "c", 1_000n * USD);
  await s.usage("o2", "d", 1_000n * USD);
  const x = privateKeyToAccount(generatePrivateKey());
  await s.w.chain.test.setBalance({ address: x.address, value: parseEther("1") });
  return { s, x };
}

/** The marketplace's wallet x pays 1,000 TUSD into the vault once; the worker's tick scans it (after `beforeScan`). */
async function pay(s: FundingWorld, x: PrivateKeyAccount, beforeScan?: (hash: Hex) => Promise<void>): Promise<Hex> {
  const hash = await payVault(s, x, 1_000n * USD);
  await beforeScan?.(hash);
  await s.w.worker().tick();
  return hash;
}

/** x registered, with its signature, as customer d's deposit address. */
async function registerForD(s: FundingWorld, x: PrivateKeyAccount): Promise<void> {
  const signature = await x.signMessage({ message: depositAddressMessage({ marketplaceId: "m", customerId: "d", chainId: 31337n, address: x.address }) });
  expectStatus(
    await s.api.call("POST", "/v1/customers/d/deposit-addresses", { key: s.keys.market, body: { chain_id: 31337, address: x.address, signature } }),
    201,
  );
}

const payable = async (s: FundingWorld) => BigInt((await s.balance("o")).payable_now) + BigInt((await s.balance("o2")).payable_now);

describe("an on-chain payment is received once, whatever the spelling of its hash", () => {
  it("a deposit the scanner credited is refused as a receipt however the hash is written", async () => {
    const { s, x } = await world2();
    await registerForD(s, x);
    // A receipt of another token naming the transaction before it is scanned does not keep the
    // TUSD it carried from being credited (one transaction may carry several tokens). A receipt in
    // an off-chain unit would: tests/integration/receipt-offchain-asset.test.ts.
    const other = privateKeyToAccount(generatePrivateKey()).address;
    const token = { code: "TEUR", scale: 2, settlement: { kind: "erc20", chain_id: 31337, token_address: other } };
    expectStatus(await s.api.call("POST", "/v1/assets", { body: token }), 201);
    const hash = await pay(s, x, async (h) => {
      const teur = await s.api.call("POST", "/v1/marketplaces/m/receipts", {
        key: s.keys.finance,
        body: { asset: "TEUR", amount: "100", reference: `fx for ${h}`, customer_id: "c" },
      });
      expectStatus(teur, 201);
    });
    expect(await s.w.db.query("select tx_hash from chain_deposits")).toEqual([{ tx_hash: hash.toLowerCase() }]);
    const spellings = [
      hash,
      hash.slice(2),
      `Base tx ${hash}`,
      hash.slice(2).toUpperCase(),
      `${hash.slice(0, 30)}-${hash.slice(30)}`,
      `deadbeef${hash.slice(2)}`,
      `0x${hash.slice(2).replace(/0/g, "O").replace(/1/g, "l")}`,
    ];
    for (const reference of spellings) {
      const r = await s.receipt(1_000n * USD, reference);
      expect(r.status, reference).toBe(409);
      expect(r.body.code).toBe("receipt_exists");
    }
    // Spelt with letters or digits that only look like hex (Cyrillic а, fullwidth digits, a
    // zero-width space), the hash would name no transaction: such a reference is not taken at all.
    const lookalikes = [
      `${hash.slice(0, 12)}\u0430${hash.slice(13)}`,
      `0x${hash.slice(2).replace(/[0-9]/g, (d) => String.fromCharCode(0xff10 + Number(d)))}`,
      `${hash.slice(0, 30)}\u200b${hash.slice(30)}`,
    ];
    for (const reference of lookalikes) {
      const r = await s.receipt(1_000n * USD, reference);
      expect(r.status, reference).toBe(400);
      expect(r.body.errors).toContainEqual(expect.objectContaining({ path: "reference" }));
    }
    expect(await s.payoutRows()).toBe("0");
    expect((await s.w.db.query<{ n: string }>("select count(*)::text as n from proposals where kind = 'receipt'"))[0]!.n).toBe("1"); // the TEUR one
    // 1,000 TUSD came in (d's): o2's earnings are funded, o's are not.
    expect(await payable(s)).toBe(890n * USD);
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
    // A receipt row naming it, written past the service (by hand in the database): verify names it.
    await s.w.db.query(
      `insert into funds_receipts (id, marketplace_id, customer_id, asset_id, amount, reference, reference_key, transfer_id, proposal_id, received_at)
       select gen_random_uuid(), 'm', null, id, 1, $1, $2, gen_random_uuid(), gen_random_uuid(), now() from assets where code = 'TUSD'`,
      [`Base tx ${hash}`, referenceKey(`Base tx ${hash}`)],
    );
    expect((await verifyLedger(s.w.db)).violations).toContainEqual({ check: "received_once", detail: expect.stringContaining(hash.toLowerCase()) });
  }, 120_000);

  it("a settlement recorded as 'tx 0x…' (O for 0) is not credited again once the wallet is registered for a customer; nor recorded twice", async () => {
    const { s, x } = await world2();
    const hash = await pay(s, x);
    // Recorded with an O for every 0 (as a hash is sometimes typed): it still names the transaction.
    await s.settle(1_000n * USD, `tx ${hash.replace(/0/g, "O").replace(/^O/, "0")}`);
    // The same payment again, spelled otherwise: refused.
    const again = await s.receipt(1_000n * USD, hash.slice(2).toUpperCase());
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("receipt_exists");
    // The marketplace registers its wallet for customer d; finance's reconciliation scans the payment again.
    await registerForD(s, x);
    const head = Number(await s.w.chain.public.getBlockNumber());
    expectStatus(
      await s.api.call("POST", "/v1/reconciliations", { key: s.keys.finance, body: { chain_id: 31337, asset: "TUSD", from_block: 0, to_block: head - 1 } }),
      201,
    );
    await s.w.worker().tick();
    expect(await s.w.db.query("select tx_hash from chain_deposits")).toEqual([]);
    expect(await payable(s)).toBeLessThanOrEqual(890n * USD);
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
  }, 120_000);
});

describe("a receipt proposal rejected gives its deposit back to the scanner", () => {
  it("a deposit skipped while a receipt proposal named it is credited once the proposal is rejected, once", async () => {
    const { s, x } = await world2();
    await registerForD(s, x);
    let proposal = "";
    const hash = await pay(s, x, async (h) => {
      proposal = (await s.proposeReceipt(1_000n * USD, `Base tx ${h}`)).id;
    });
    // Scanned while the proposal stood: recorded as a receipt, not credited.
    expect(await s.w.db.query("select tx_hash from chain_deposits")).toEqual([]);
    expect(await payable(s)).toBe(0n);
    // Rejected by another key: the next pass credits customer d with the payment, and only it, from
    // what the scan read (here with a node that answers nothing: a lagging or unreachable one).
    expectStatus(await s.api.call("POST", `/v1/proposals/${proposal}/reject`, { key: s.keys.finance2!, body: { reason: "not a settlement" } }), 200);
    const chain = s.w.settlements.chains[0]!;
    const silent = Object.create(chain) as typeof chain;
    for (const f of ["receipt", "transfersIn", "head"] as const)
      (silent as unknown as Record<string, unknown>)[f] = async () => {
        throw new Error("the node does not answer");
      };
    expect(await recheckRejectedReceipts(s.w.db, silent, await listAssets(s.w.db, { limit: 1000 }))).toBe(1);
    await s.w.worker().tick();
    await s.w.worker().tick();
    expect(await s.w.db.query("select tx_hash, customer_id, amount::text from chain_deposits")).toEqual([
      { tx_hash: hash.toLowerCase(), customer_id: "d", amount: (1_000n * USD).toString() },
    ]);
    expect(await payable(s)).toBe(890n * USD);
    expect(await s.w.db.query("select count(*)::int as n from receipt_rechecks")).toEqual([{ n: 1 }]);
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
  }, 120_000);
});

describe("txHashesIn", () => {
  it("finds every 64-digit window of a reference key's hex runs", () => {
    const h = "a".repeat(63) + "b";
    expect(txHashesIn(h)).toEqual([`0x${h}`]);
    expect(txHashesIn(`0x${h}`)).toEqual([`0x${h}`]);
    expect(txHashesIn(`tx${h}`)).toEqual([`0x${h}`]);
    expect(txHashesIn(`e${h}`)).toEqual([`0x${("e" + h).slice(0, 64)}`, `0x${h}`]);
    expect(txHashesIn("wire20260042")).toEqual([]);
    expect(txHashesIn("a".repeat(63))).toEqual([]);
    // Letters that pass for digits: o for 0, i and l for 1.
    expect(txHashesIn(`0x${"o".repeat(32)}${"l".repeat(16)}${"i".repeat(16)}`)).toEqual([`0x${"0".repeat(32)}${"1".repeat(32)}`]);
  });
});
