import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getBalance } from "../../src/db/queries/accounts.js";
import { writeTransfers } from "../../src/db/transfer-writer.js";
import type { TransferInput } from "../../src/domain/transfers.js";
import { createLedgerContext } from "../../src/services/context.js";
import { postTransfer } from "../../src/services/post-transfers.js";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { freshDatabase, NEEDS_PG, onRealPostgres, type TestDatabase } from "../support/db.js";
import { anAccount, anAsset, noOverdraft } from "../support/fixtures.js";

/**
 * Real concurrency needs several connections to a real server: PGlite has one connection, so
 * these run only with TEST_DATABASE_URL (CI runs them against PostgreSQL).
 */
describe.skipIf(!onRealPostgres)(`concurrency ${NEEDS_PG}`, () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await freshDatabase({ maxConnections: 30 });
  });
  /** Entries of the account, in order, whose balance_after is not the sum of the entries up to it. */
  const runningBalanceBreaks = async (accountId: string) =>
    (
      await db.query<{ id: string }>(
        `select id::text from (
       select e.id, e.balance_after,
              sum(case when (e.side = a.normal_side) then e.posted_amount else -e.posted_amount end) over (order by e.id) as running
         from entries e join accounts a on a.id = e.account_id where e.account_id = $1) t
      where balance_after <> running`,
        [accountId],
      )
    ).map((r) => r.id);

  afterAll(async () => {
    const report = await verifyLedger(db);
    expect(report.violations).toEqual([]);
    await db.destroy();
  });

  // The same races in both modes of the batch writer: accounts locked first, or decided on balances
  // read without locks and locked last (the usage and transfer paths; see writeTransfers).
  describe.each([
    ["locking", false],
    ["optimistic", true],
  ] as const)("%s", (mode, optimistic) => {
    const write = (batch: TransferInput[]) => writeTransfers(db, batch, { optimistic });

    it("50 concurrent spenders never overdraw a no-overdraft account, and the sum is exact", async () => {
      const asset = await anAsset(db);
      const funding = (await anAccount(db, asset.id, { normalSide: "debit" })).id;
      const wallet = (await noOverdraft(db, asset.id)).id;
      const sink = (await anAccount(db, asset.id)).id;
      await write([{ kind: "standard", idempotencyKey: `${mode}-fund`, legs: [{ debitAccountId: funding, creditAccountId: wallet, amount: 1000n }] }]);
      // 50 spenders, each trying 4 times to spend 7: 1400 wanted, 1000 there.
      const attempts = Array.from({ length: 50 }, (_, s) =>
        Array.from({ length: 4 }, (_, i): TransferInput => ({
          kind: "standard",
          idempotencyKey: `${mode}-spend-${s}-${i}`,
          legs: [{ debitAccountId: wallet, creditAccountId: sink, amount: 7n }],
        })),
      );
      // Half go one at a time on their own transactions; half go through the group committer.
      const ctx = createLedgerContext(db, { maxConcurrent: 8 });
      const results = await Promise.all(
        attempts.map(async (mine, s) => {
          const out = [];
          for (const a of mine) out.push(s % 2 ? (await write([a]))[0]! : await postTransfer(ctx, a));
          return out;
        }),
      );
      await ctx.transfers.close();
      const accepted = results.flat().filter((r) => r.ok).length;
      const refused = results.flat().filter((r) => !r.ok);
      expect(refused.every((r) => !r.ok && r.error.code === "exceeds_credits")).toBe(true);
      expect(accepted).toBe(Math.floor(1000 / 7));
      expect(await getBalance(db, wallet)).toMatchObject({ posted: 1000n - 7n * BigInt(accepted), debitsPending: 0n });
      expect((await getBalance(db, sink))!.posted).toBe(7n * BigInt(accepted));
    });

    it("20 concurrent retries of one idempotency key make one transfer", async () => {
      const asset = await anAsset(db);
      const [a, b] = [(await anAccount(db, asset.id)).id, (await anAccount(db, asset.id)).id];
      const req: TransferInput = { kind: "standard", idempotencyKey: `${mode}-retry-me`, legs: [{ debitAccountId: a, creditAccountId: b, amount: 5n }] };
      const results = (await Promise.all(Array.from({ length: 20 }, () => write([{ ...req }])))).flat();
      expect(results.every((r) => r.ok)).toBe(true);
      const ids = new Set(results.map((r) => (r.ok ? r.transfer.id : "")));
      expect(ids.size).toBe(1);
      expect(results.filter((r) => r.ok && !r.replayed).length).toBe(1);
      expect((await getBalance(db, b))!.posted).toBe(5n);
      const [row] = await db.query<{ n: string }>("select count(*)::text as n from transfers where idempotency_key = $1", [`${mode}-retry-me`]);
      expect(row!.n).toBe("1");
    });

    it("a retry racing its original replays it, even when running it again would be refused", async () => {
      const asset = await anAsset(db);
      const funding = (await anAccount(db, asset.id, { normalSide: "debit" })).id;
      const wallet = (await noOverdraft(db, asset.id)).id;
      const sink = (await anAccount(db, asset.id)).id;
      await write([{ kind: "standard", idempotencyKey: `${mode}-fund-exact`, legs: [{ debitAccountId: funding, creditAccountId: wallet, amount: 10n }] }]);
      // Spending the whole balance twice under one key: the second must replay, not fail for funds.
      const req: TransferInput = {
        kind: "standard",
        idempotencyKey: `${mode}-spend-all`,
        legs: [{ debitAccountId: wallet, creditAccountId: sink, amount: 10n }],
      };
      for (let round = 0; round < 5; round++) {
        const key = `${mode}-spend-all-${round}`;
        if (round > 0)
          await write([
            { kind: "standard", idempotencyKey: `${mode}-refund-${round}`, legs: [{ debitAccountId: sink, creditAccountId: wallet, amount: 10n }] },
          ]);
        const results = (await Promise.all(Array.from({ length: 8 }, () => write([{ ...req, idempotencyKey: key }])))).flat();
        expect(results.map((r) => (r.ok ? "ok" : r.error.code))).toEqual(Array(8).fill("ok"));
        expect(new Set(results.map((r) => (r.ok ? r.transfer.id : ""))).size).toBe(1);
      }
      expect((await getBalance(db, wallet))!.posted).toBe(0n);
    });

    it("concurrent batches touching the same accounts in different orders never deadlock", async () => {
      const asset = await anAsset(db);
      const accounts = await Promise.all(Array.from({ length: 8 }, () => anAccount(db, asset.id)));
      const ids = accounts.map((a) => a.id);
      const batches = Array.from({ length: 24 }, (_, b) => {
        const order = b % 2 ? [...ids] : [...ids].reverse();
        return Array.from({ length: 50 }, (_, i): TransferInput => ({
          kind: "standard",
          idempotencyKey: `${mode}-mesh-${b}-${i}`,
          legs: [
            { debitAccountId: order[i % 8]!, creditAccountId: order[(i + 3) % 8]!, amount: 1n },
            { debitAccountId: order[(i + 5) % 8]!, creditAccountId: order[(i + 1) % 8]!, amount: 2n },
          ],
        }));
      });
      const results = (await Promise.all(batches.map((batch) => write(batch)))).flat();
      expect(results.every((r) => r.ok && !r.replayed)).toBe(true);
      const balances = await Promise.all(ids.map((id) => getBalance(db, id)));
      const total = balances.reduce((s, b) => s + b!.creditsPosted, 0n);
      expect(total).toBe(24n * 50n * 3n);
      // Every entry's running balance is its account's balance after it, in entry order.
      for (const id of ids) expect(await runningBalanceBreaks(id)).toEqual([]);
    });
  });

  describe("optimistic batches meeting balances that moved before they lock", () => {
    const setUp = async () => {
      const asset = await anAsset(db);
      const funding = (await anAccount(db, asset.id, { normalSide: "debit" })).id;
      const wallet = (await noOverdraft(db, asset.id)).id;
      const sink = (await anAccount(db, asset.id)).id;
      await writeTransfers(db, [
        { kind: "standard", idempotencyKey: `fund-${wallet}`, legs: [{ debitAccountId: funding, creditAccountId: wallet, amount: 10n }] },
      ]);
      const spend = (key: string, amount: bigint): TransferInput => ({
        kind: "standard",
        idempotencyKey: `${key}-${wallet}`,
        legs: [{ debitAccountId: wallet, creditAccountId: sink, amount }],
      });
      // Spends `amount` optimistically; another writer spends `meanwhile` and commits after this
      // batch has decided, before it takes its locks.
      const race = (amount: bigint, meanwhile: bigint) => {
        let calls = 0;
        return writeTransfers(db, [spend("mine", amount)], {
          optimistic: true,
          afterWrite: async () => {
            if (calls++ === 0) expect((await writeTransfers(db, [spend("theirs", meanwhile)]))[0]!.ok).toBe(true);
          },
        }).then(([r]) => ({ result: r!, calls }));
      };
      return { wallet, race };
    };

    it("still fits: accepted, with the running balances recomputed from the balance it met", async () => {
      const { wallet, race } = await setUp();
      const { result, calls } = await race(6n, 3n);
      expect(result.ok).toBe(true);
      expect(calls).toBe(1);
      expect((await getBalance(db, wallet))!.posted).toBe(1n);
      const rows = await db.query<{ b: string }>("select balance_after::text as b from entries where account_id = $1 order by id", [wallet]);
      expect(rows.map((r) => r.b)).toEqual(["10", "7", "1"]);
      expect(await runningBalanceBreaks(wallet)).toEqual([]);
    });

    it("no longer fits: run again with the locks taken first, and refused for funds", async () => {
      const { wallet, race } = await setUp();
      const { result, calls } = await race(6n, 5n);
      expect(result.ok ? "ok" : result.error.code).toBe("exceeds_credits");
      expect(calls).toBe(2);
      expect((await getBalance(db, wallet))!.posted).toBe(5n);
      expect(await runningBalanceBreaks(wallet)).toEqual([]);
    });
  });

  it("concurrent posts and voids of one hold resolve it exactly once", async () => {
    const asset = await anAsset(db);
    const [a, b] = [(await anAccount(db, asset.id)).id, (await anAccount(db, asset.id)).id];
    const [hold] = await writeTransfers(db, [{ kind: "pending", idempotencyKey: "hold-race", legs: [{ debitAccountId: a, creditAccountId: b, amount: 9n }] }]);
    if (!hold?.ok) throw new Error("hold refused");
    const results = (
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          writeTransfers(db, [
            i % 2
              ? { kind: "post_pending", idempotencyKey: `resolve-${i}`, pendingId: hold.transfer.id }
              : { kind: "void_pending", idempotencyKey: `resolve-${i}`, pendingId: hold.transfer.id },
          ]),
        ),
      )
    ).flat();
    expect(results.filter((r) => r.ok).length).toBe(1);
    expect(results.filter((r) => !r.ok).every((r) => !r.ok && ["pending_already_posted", "pending_already_voided"].includes(r.error.code))).toBe(true);
    expect(await getBalance(db, b)).toMatchObject({ creditsPending: 0n });
  });
});
