import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { customersDebitsBound, customersNeedBeyondCash, upsertMarketplaceCreditLimit } from "../../src/db/queries/funding.js";
import { ensureAccounts } from "../../src/db/ensure-accounts.js";
import { chart } from "../../src/domain/chart.js";
import { uuidv7 } from "../../src/domain/ids.js";
import { closeLedgerContext, createLedgerContext, type LedgerContext } from "../../src/services/context.js";
import { unfundedUsage, withheldEarnings } from "../../src/services/funding.js";
import { closeHold, openHold } from "../../src/services/holds.js";
import { reverseUsage } from "../../src/services/reverse-usage.js";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { freshDatabase, withTriggersOff, type TestDatabase } from "../support/db.js";
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

    // Records of both customers in two marketplaces at once (batched together or not, as they come).
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

  it("bound what the usage needs beyond the customers' money: a shown judgment takes the shortcut only when the pool covers it, with the same answer as the full one", async () => {
    const w = await usageWorld(ctx, 50_000_000n);
    // The postpaid customer has paid nothing, and the prepaid one's deposit was claimed by the
    // marketplace, not received: all of their usage waits for the marketplace's money.
    for (let i = 0; i < 3; i++)
      expect((await ctx.usage.submit({ marketplaceId: w.m, input: w.record(`n-${i}`, { customerId: "postpaid" }) })).status).toBe("accepted");
    expect((await ctx.usage.submit({ marketplaceId: w.m, input: w.record("n-pre") })).status).toBe("accepted");
    const gross = 4n * 2_498_400n;
    expect(await customersNeedBeyondCash(db, w.m, w.asset.id)).toBe(gross);
    expect(await customersDebitsBound(db, w.m, w.asset.id)).toBe(gross);
    const unfundedGross = async (shown: boolean) => (await unfundedUsage(db, w.m, w.asset.id, null, { shown })).reduce((s, u) => s + u.gross, 0n);
    // No pool: neither bound is covered; both judgments read the records and find them all unfunded.
    expect(await unfundedGross(true)).toBe(gross);
    expect(await unfundedGross(false)).toBe(gross);
    // A credit limit one unit short of the need: still not covered, the records decide (the last one partly).
    await upsertMarketplaceCreditLimit(db, {
      marketplaceId: w.m,
      assetId: w.asset.id,
      creditLimit: (gross - 1n).toString(),
      proposalId: uuidv7(),
      updatedAt: new Date(),
    });
    expect(await unfundedGross(true)).toBe(1n);
    expect(await unfundedGross(false)).toBe(1n);
    // Covered: the shown judgment stops at the one row, the full one at the sum; both find nothing unfunded.
    await upsertMarketplaceCreditLimit(db, {
      marketplaceId: w.m,
      assetId: w.asset.id,
      creditLimit: gross.toString(),
      proposalId: uuidv7(),
      updatedAt: new Date(),
    });
    expect(await unfundedGross(true)).toBe(0n);
    expect(await unfundedGross(false)).toBe(0n);
  });

  it("with money converted out of the asset, the bound adds what was converted and still bounds the need", async () => {
    const w = await usageWorld(ctx, 50_000_000n);
    const other = await usageWorld(ctx, 50_000_000n);
    expect((await ctx.usage.submit({ marketplaceId: w.m, input: w.record("x-1", { customerId: "postpaid" }) })).status).toBe("accepted");
    expect((await ctx.usage.submit({ marketplaceId: w.m, input: w.record("x-2") })).status).toBe("accepted");
    const gross = 2n * 2_498_400n;
    expect(await customersDebitsBound(db, w.m, w.asset.id)).toBe(gross);
    class Rollback extends Error {}
    // Conversions out of the asset (as the worker records them when a customer's money moves to the
    // pricing currency), in a transaction rolled back: the need grows by what each customer converted.
    await db
      .transaction(async (tx) => {
        const convert = (customer: string, used: bigint) =>
          tx.query(
            `insert into conversions (id, transfer_id, kind, marketplace_id, customer_id, from_asset_id, to_asset_id, bps, part, used, remainder, to_amount, rate_num, rate_den, converted_at)
             values ($1, $2, 'deposit', $3, $4, $5, $6, 10000, $7, $7, 0, $7, 1, 1, now())`,
            [uuidv7(), uuidv7(), w.m, customer, w.asset.id, other.asset.id, used.toString()],
          );
        await convert("postpaid", 700n);
        await convert("prepaid", 300n);
        const need = await customersNeedBeyondCash(tx, w.m, w.asset.id);
        expect(need).toBe(gross + 1_000n);
        expect(await customersDebitsBound(tx, w.m, w.asset.id)).toBe(gross + 1_000n);
        throw new Rollback();
      })
      .catch((e: unknown) => {
        if (!(e instanceof Rollback)) throw e;
      });
    expect(await customersDebitsBound(db, w.m, w.asset.id)).toBe(gross);
  });

  it("are written only by their trigger; a total changed behind its back misleads no payout and is named by verify", async () => {
    const w = await usageWorld(ctx, 50_000_000n);
    expect((await ctx.usage.submit({ marketplaceId: w.m, input: w.record("v-1", { customerId: "postpaid" }) })).status).toBe("accepted");
    const key = [w.m, w.asset.id];
    for (const attempt of [
      "update customer_debit_totals set debits_posted = 0 where marketplace_id = $1 and asset_id = $2",
      "delete from customer_debit_totals where marketplace_id = $1 and asset_id = $2",
      "insert into customer_debit_totals (marketplace_id, asset_id, debits_posted) values ($1 || '-x', $2, 5)",
    ])
      await expect(db.query(attempt, key)).rejects.toThrow(/customer_debit_totals is kept by the trigger on account_balances/);
    await expect(db.query("truncate customer_debit_totals")).rejects.toThrow(/TRUNCATE is not allowed/);
    expect(await stored(w)).toBe(2_498_400n);

    // A superuser turns triggers off for one transaction and lowers the total, so that the shortcut
    // would find every record funded with no pool at all.
    const tamper = (sql: string) => withTriggersOff(db, [sql], key);
    await tamper("update customer_debit_totals set debits_posted = 0 where marketplace_id = $1 and asset_id = $2");
    const report = await verifyLedger(db);
    expect(report.ok).toBe(false);
    expect(report.violations.find((v) => v.check === "customer_debit_totals")?.detail).toMatch(
      new RegExp(`marketplace ${w.m}, asset ${w.asset.id}: customer debits total 0 stored, 2498400 in its customers' balances`),
    );
    // A balance shown is misled (that is what verify is for); money moved is judged on the rows.
    expect(await unfundedUsage(db, w.m, w.asset.id, null, { shown: true })).toEqual([]);
    expect((await unfundedUsage(db, w.m, w.asset.id)).map((u) => u.gross)).toEqual([2_498_400n]);
    expect((await withheldEarnings(db, w.operators[0]!, w.asset.id)).awaiting.total).toBe(2_223_576n);
    // A missing or negative total is no bound at all: the shown judgment sums every customer.
    await tamper("delete from customer_debit_totals where marketplace_id = $1 and asset_id = $2");
    expect(await customersDebitsBound(db, w.m, w.asset.id)).toBeNull();
    expect((await unfundedUsage(db, w.m, w.asset.id, null, { shown: true })).map((u) => u.gross)).toEqual([2_498_400n]);
    await tamper("insert into customer_debit_totals (marketplace_id, asset_id, debits_posted) values ($1, $2, -1)");
    expect(await customersDebitsBound(db, w.m, w.asset.id)).toBeNull();
    await tamper("update customer_debit_totals set debits_posted = 2498400 where marketplace_id = $1 and asset_id = $2");
    expect((await verifyLedger(db)).violations).toEqual([]);
  });

  it("follow balances edited by SQL, deleted, inserted and moved to another account, in the same statement", async () => {
    const w = await usageWorld(ctx, 50_000_000n);
    const other = await usageWorld(ctx, 50_000_000n);
    expect((await ctx.usage.submit({ marketplaceId: w.m, input: w.record("e-1", { customerId: "postpaid" }) })).status).toBe("accepted");
    const exact = async () => {
      for (const x of [w, other]) expect((await stored(x)) ?? 0n).toBe(await customerDebits(x));
    };
    // Changed by SQL, not through the ledger: verify names the balance, not the total.
    await db.query("update account_balances set debits_posted = debits_posted + 7 where account_id = $1", [w.accounts.postpaid]);
    expect(await stored(w)).toBe(2_498_400n + 7n);
    const checks = (await verifyLedger(db)).violations.map((v) => v.check);
    expect(checks).toContain("balances_match_entries");
    expect(checks).not.toContain("customer_debit_totals");
    await db.query("update account_balances set debits_posted = debits_posted - 7 where account_id = $1", [w.accounts.postpaid]);
    await exact();
    // Deleted and inserted again with its debits.
    const [row] = await db.query<Record<string, string>>("select * from account_balances where account_id = $1", [w.accounts.postpaid]);
    await db.query("delete from account_balances where account_id = $1", [w.accounts.postpaid]);
    await exact();
    expect(await stored(w)).toBe(0n);
    const insertBack = (id: string) =>
      db.query(
        "insert into account_balances (account_id, debits_posted, credits_posted, debits_pending, credits_pending, overdraft_limit) values ($1, $2, $3, $4, $5, $6)",
        [id, row!.debits_posted, row!.credits_posted, row!.debits_pending, row!.credits_pending, row!.overdraft_limit],
      );
    await insertBack(w.accounts.postpaid);
    await exact();
    // Moved to another marketplace's customer account: out of one total, into the other.
    const [target] = await db.query<Record<string, string>>("select * from account_balances where account_id = $1", [other.accounts.postpaid]);
    await db.query("delete from account_balances where account_id = $1", [other.accounts.postpaid]);
    await db.query("update account_balances set account_id = $2 where account_id = $1", [w.accounts.postpaid, other.accounts.postpaid]);
    await exact();
    expect(await stored(other)).toBe(2_498_400n);
    expect(await stored(w)).toBe(0n);
    await db.query("update account_balances set account_id = $2 where account_id = $1", [other.accounts.postpaid, w.accounts.postpaid]);
    await db.query("insert into account_balances (account_id, overdraft_limit) values ($1, $2)", [other.accounts.postpaid, target!.overdraft_limit]);
    await exact();
    expect((await verifyLedger(db)).violations).toEqual([]);
  });

  it("follow a change of thousands of balances in one statement after changes of one, on one connection, as fast as a change of a few", async () => {
    // A session keeps one plan per trigger statement without parameters, made at its first call. A
    // plan made for a one-row change while accounts was small (a scan of accounts around nested
    // loops over the transition tables) made a 2,000-row update run for minutes. The statement is
    // now planned at each call with the sizes of its tables then; the timeout here is 100 times
    // what the change takes, so only that kind of plan trips it.
    const w = await usageWorld(ctx, 0n);
    const sentinel = new Error("rolled back");
    const many = Array.from({ length: 2000 }, (_, i) => chart.customer(w.asset.id, w.m, `bulk-${i}`, true));
    await expect(
      db.transaction(async (tx) => {
        const [first] = (await ensureAccounts(tx, [many[0]!])).values();
        for (let i = 0; i < 6; i++) await tx.query("update account_balances set debits_posted = debits_posted + 1 where account_id = $1", [first]);
        const ids = [...(await ensureAccounts(tx, many)).values()];
        await tx.query("set local statement_timeout = '10s'");
        await tx.query("update account_balances set debits_posted = debits_posted + 1 where account_id = any($1::uuid[])", [ids]);
        const [row] = await tx.query<{ d: string }>("select debits_posted::text as d from customer_debit_totals where marketplace_id = $1 and asset_id = $2", [
          w.m,
          w.asset.id,
        ]);
        expect(row!.d).toBe("2006");
        throw sentinel;
      }),
    ).rejects.toBe(sentinel);
    expect(await stored(w)).toBeUndefined();
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
