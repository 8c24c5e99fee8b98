import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { customersDebitsBound, customersNeedBeyondCash } from "../../src/db/queries/funding.js";
import { closeLedgerContext, createLedgerContext, type LedgerContext } from "../../src/services/context.js";
import { unfundedUsage } from "../../src/services/funding.js";
import { closeHold, openHold } from "../../src/services/holds.js";
import { reverseUsage } from "../../src/services/reverse-usage.js";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { freshDatabase, type TestDatabase } from "../support/db.js";
import { usageWorld, type UsageWorld } from "../support/usage-world.js";

/**
 * customer_debit_totals: per marketplace and asset, the debits posted to its customers' accounts,
 * kept by a trigger on account_balances. The funding judgment trusts it as an upper bound of what
 * the marketplace's usage needs beyond its customers' money (src/services/funding.ts), so it must
 * equal the balances after every kind of write, and `verify` must name it when it does not.
 */
let db: TestDatabase;
let ctx: LedgerContext;
beforeAll(async () => {
  db = await freshDatabase();
  ctx = createLedgerContext(db);
});
afterAll(async () => {
  await closeLedgerContext(ctx);
  await db.destroy();
});

/** The sum of the debits posted to the marketplace's customer accounts, read from the balances. */
async function customerDebits(w: UsageWorld): Promise<bigint> {
  const [row] = await db.query<{ d: string }>(
    `select coalesce(sum(b.debits_posted), 0)::text as d from accounts a join account_balances b on b.account_id = a.id
      where a.marketplace_id = $1 and a.asset_id = $2 and a.opened_by_service and a.code in ('customer_prepaid', 'customer_postpaid')`,
    [w.m, w.asset.id],
  );
  return BigInt(row!.d);
}

async function stored(w: UsageWorld): Promise<bigint | undefined> {
  const [row] = await db.query<{ d: string }>("select debits_posted::text as d from customer_debit_totals where marketplace_id = $1 and asset_id = $2", [
    w.m,
    w.asset.id,
  ]);
  return row ? BigInt(row.d) : undefined;
}

describe("customer debit totals", () => {
  it("follow usage, a batch, holds opened, used and closed, and reversals, on prepaid and postpaid customers", async () => {
    const w = await usageWorld(ctx, 50_000_000n);
    const other = await usageWorld(ctx, 50_000_000n);
    const check = async () => {
      for (const x of [w, other]) expect((await stored(x)) ?? 0n).toBe(await customerDebits(x));
    };
    // The deposit credits the prepaid customer: nothing debited yet.
    expect(await customerDebits(w)).toBe(0n);

    const single = await ctx.usage.submit({ marketplaceId: w.m, input: w.record("t-1") });
    expect(single.status).toBe("accepted");
    await check();
    expect(await stored(w)).toBe(2_498_400n);

    // A batch of both customers in two marketplaces at once (one statement updates both totals).
    const results = await Promise.all([
      ...Array.from({ length: 10 }, (_, i) =>
        ctx.usage.submit({ marketplaceId: w.m, input: w.record(`t-b${i}`, { customerId: i % 2 ? "prepaid" : "postpaid" }) }),
      ),
      ...Array.from({ length: 5 }, (_, i) => ctx.usage.submit({ marketplaceId: other.m, input: other.record(`o-b${i}`, { customerId: "postpaid" }) })),
    ]);
    expect(results.every((r) => r.status === "accepted")).toBe(true);
    await check();
    expect(await stored(other)).toBe(5n * 2_498_400n);

    // A hold debits the customer (pending), usage on it posts, closing returns the rest.
    const hold = await openHold(db, { marketplaceId: w.m, customerId: "prepaid", asset: w.asset.code, amount: 4_000_000n, idempotencyKey: `h-${w.m}` });
    await check();
    const onHold = await ctx.usage.submit({ marketplaceId: w.m, input: w.record("t-hold", { holdId: hold.id, amount: "1000000", unitPrice: undefined }) });
    expect(onHold.status).toBe("accepted");
    await check();
    await closeHold(db, { id: hold.id });
    await check();

    // A reversal credits the customer back; its debits stay as they were (what the funding bound counts).
    const before = await stored(w);
    if (single.status !== "accepted") return;
    await reverseUsage(db, { usage: single.record, reason: "test", idempotencyKey: `rev-${w.m}` });
    await check();
    expect(await stored(w)).toBe(before);
    expect((await verifyLedger(db)).violations).toEqual([]);
  });

  it("bound what the usage needs beyond the customers' money, and the judgment gives the same answer with or without the bound", async () => {
    const w = await usageWorld(ctx, 50_000_000n);
    // The postpaid customer has paid nothing: its usage waits for the marketplace's money.
    for (let i = 0; i < 3; i++)
      expect((await ctx.usage.submit({ marketplaceId: w.m, input: w.record(`n-${i}`, { customerId: "postpaid" }) })).status).toBe("accepted");
    expect((await ctx.usage.submit({ marketplaceId: w.m, input: w.record("n-pre") })).status).toBe("accepted");
    const need = await customersNeedBeyondCash(db, w.m, w.asset.id);
    const bound = await customersDebitsBound(db, w.m, w.asset.id);
    expect(need).toBe(4n * 2_498_400n);
    // The prepaid customer's deposit was claimed by the marketplace, not received: it funds nothing either.
    expect(bound).toBe(4n * 2_498_400n);
    expect(bound! >= need).toBe(true);
    // Nothing received and no pool: the bound does not cover it, and the full judgment finds every record unfunded.
    const unfunded = await unfundedUsage(db, w.m, w.asset.id);
    expect(unfunded.reduce((s, u) => s + u.gross, 0n)).toBe(4n * 2_498_400n);
  });

  it("are named by verify when edited behind the ledger's back, and follow a balance edited by SQL", async () => {
    const w = await usageWorld(ctx, 50_000_000n);
    expect((await ctx.usage.submit({ marketplaceId: w.m, input: w.record("v-1") })).status).toBe("accepted");
    // An attacker lowers the total so that the bound would say every record is funded.
    await db.query("update customer_debit_totals set debits_posted = 0 where marketplace_id = $1 and asset_id = $2", [w.m, w.asset.id]);
    const report = await verifyLedger(db);
    expect(report.ok).toBe(false);
    expect(report.violations.find((v) => v.check === "customer_debit_totals")?.detail).toMatch(
      new RegExp(`marketplace ${w.m}, asset ${w.asset.id}: customer debits total 0 stored, 2498400 in its customers' balances`),
    );
    await db.query("update customer_debit_totals set debits_posted = $3 where marketplace_id = $1 and asset_id = $2", [w.m, w.asset.id, "2498400"]);
    expect((await verifyLedger(db)).violations.filter((v) => v.check === "customer_debit_totals")).toEqual([]);
    // A balance changed by SQL (not through the ledger) moves the total in the same statement:
    // verify then names the balance, not the total.
    await db.query("update account_balances set debits_posted = debits_posted + 7 where account_id = $1", [w.accounts.postpaid]);
    expect(await stored(w)).toBe(2_498_400n + 7n);
    const checks = (await verifyLedger(db)).violations.map((v) => v.check);
    expect(checks).toContain("balances_match_entries");
    expect(checks).not.toContain("customer_debit_totals");
    await db.query("update account_balances set debits_posted = debits_posted - 7 where account_id = $1", [w.accounts.postpaid]);
    expect((await verifyLedger(db)).violations).toEqual([]);
  });

  it("refuse a negative on-chain deposit (a customer's money received never lowers the bound)", async () => {
    const w = await usageWorld(ctx, 50_000_000n);
    await expect(
      db.query(
        `insert into chain_deposits (chain_id, tx_hash, log_index, asset_id, from_address, amount, block_number, marketplace_id, customer_id, transfer_id)
         values (31337, '0x' || repeat('a', 64), 0, $2, '0x' || repeat('b', 40), $3, 1, $1, 'prepaid', gen_random_uuid())`,
        [w.m, w.asset.id, "-5"],
      ),
    ).rejects.toThrow(/chain_deposits_amount/);
  });
});
