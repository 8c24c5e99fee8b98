import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getBalance, getBalanceAsOf, listEntries } from "../../src/db/queries/accounts.js";
import { getTransfer } from "../../src/db/queries/transfers.js";
import type { TransferResult } from "../../src/db/transfer-writer.js";
import { uuidv7 } from "../../src/domain/ids.js";
import { UINT256_MAX } from "../../src/domain/money.js";
import type { TransferInput } from "../../src/domain/transfers.js";
import { closeLedgerContext, createLedgerContext, type LedgerContext } from "../../src/services/context.js";
import { createAccount } from "../../src/services/create-account.js";
import { createAsset } from "../../src/services/create-asset.js";
import { postTransfer, postTransfers } from "../../src/services/post-transfers.js";
import { expireHolds } from "../../src/workers/hold-expirer.js";
import { freshDatabase, tableCounts, type TestDatabase } from "../support/db.js";
import { anAccount, anAsset, noOverdraft } from "../support/fixtures.js";

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

let k = 0;
const key = () => `it-${++k}`;
const ok = (r: TransferResult) => {
  if (!r.ok) throw new Error(`refused: ${r.error.code} ${r.error.message}`);
  return r.transfer;
};
const refused = (r: TransferResult) => {
  if (r.ok) throw new Error("expected a refusal");
  return r.error.code;
};
const move = (from: string, to: string, amount: bigint, extra: Partial<TransferInput> = {}): TransferInput =>
  ({ kind: "standard", idempotencyKey: key(), legs: [{ debitAccountId: from, creditAccountId: to, amount }], ...extra }) as TransferInput;

async function setup() {
  const asset = await anAsset(db);
  const funding = await anAccount(db, asset.id, { code: "equity", normalSide: "debit" });
  const customer = await noOverdraft(db, asset.id);
  const op = await anAccount(db, asset.id);
  return { asset, funding: funding.id, customer: customer.id, op: op.id };
}

describe("assets and accounts", () => {
  it("registers assets of any settlement kind and scales past 18", async () => {
    const usdc = await createAsset(db, { code: "USDC-31337", scale: 6, settlement: { kind: "erc20", chainId: 31337, tokenAddress: "0x" + "Ab".repeat(20) } });
    expect(usdc.settlement).toEqual({ kind: "erc20", chainId: 31337, tokenAddress: "0x" + "ab".repeat(20) });
    const eth = await createAsset(db, { code: "ETH-31337", scale: 18, settlement: { kind: "native", chainId: 31337 } });
    expect(eth.scale).toBe(18);
    await expect(createAsset(db, { code: "BIG", scale: 30, settlement: { kind: "offchain" } })).resolves.toMatchObject({ scale: 30 });
    // Same again: the same asset back. Same code, other attributes: refused.
    await expect(createAsset(db, { code: "ETH-31337", scale: 18, settlement: { kind: "native", chainId: 31337 } })).resolves.toEqual(eth);
    await expect(createAsset(db, { code: "ETH-31337", scale: 9, settlement: { kind: "native", chainId: 31337 } })).rejects.toMatchObject({
      code: "asset_exists",
    });
    // A chain's native token settles one asset: a second one under another code would have the
    // vault's one balance counted for both.
    await expect(createAsset(db, { code: "ETH2-31337", scale: 18, settlement: { kind: "native", chainId: 31337 } })).rejects.toMatchObject({
      code: "asset_exists",
      message: "another asset already settles as chain 31337's native token",
    });
    await expect(createAsset(db, { code: "bad code", scale: 6, settlement: { kind: "offchain" } })).rejects.toMatchObject({ code: "invalid_request" });
    await expect(createAsset(db, { code: "X", scale: 78, settlement: { kind: "offchain" } })).rejects.toMatchObject({ code: "invalid_request" });
  });

  it("opens accounts idempotently by ref and refuses unknown assets", async () => {
    const asset = await anAsset(db);
    const a = await createAccount(db, { assetId: asset.id, ref: "savings:op1", code: "savings", normalSide: "credit", ownerType: "operator", ownerId: "op1" });
    const again = await createAccount(db, {
      assetId: asset.id,
      ref: "savings:op1",
      code: "savings",
      normalSide: "credit",
      ownerType: "operator",
      ownerId: "op1",
    });
    expect(again.id).toBe(a.id);
    await expect(
      createAccount(db, { assetId: asset.id, ref: "savings:op1", code: "savings", normalSide: "debit", ownerType: "operator", ownerId: "op1" }),
    ).rejects.toMatchObject({ code: "account_exists" });
    // The service's own refs are not for accounts opened by hand.
    for (const ref of [
      "operator:op1:payable",
      "customer:c1",
      "protocol:fees",
      "marketplace:fees",
      "treasury:31337",
      "payouts:in_transit:offchain",
      "hold:x",
      "deposits:clearing",
      "expense:gas:1",
    ]) {
      await expect(createAccount(db, { assetId: asset.id, ref, code: "x", normalSide: "credit" }), ref).rejects.toMatchObject({
        code: "invalid_request",
        issues: [{ path: "ref" }],
      });
    }
    await expect(createAccount(db, { assetId: uuidv7(), code: "x", normalSide: "credit" })).rejects.toMatchObject({ code: "asset_not_found" });
    await expect(
      createAccount(db, { assetId: asset.id, code: "x", normalSide: "credit", debitsMustNotExceedCredits: true, creditsMustNotExceedDebits: true }),
    ).rejects.toMatchObject({ code: "invalid_request" });
    expect(await getBalance(db, a.id)).toMatchObject({ debitsPosted: 0n, creditsPosted: 0n, available: 0n });
    const withMeta = await createAccount(db, { assetId: asset.id, code: "x", normalSide: "credit", metadata: { region: "eu", n: 1 } });
    expect(withMeta.metadata).toEqual({ region: "eu", n: 1 });
    const [row] = await db.query<{ t: string }>("select jsonb_typeof(metadata) as t from accounts where id = $1", [withMeta.id]);
    expect(row!.t).toBe("object");
  });
});

describe("transfers", () => {
  it("posts multi-leg transfers and keeps exact uint256 amounts", async () => {
    const s = await setup();
    const fees = (await anAccount(db, s.asset.id)).id;
    ok(await postTransfer(ctx, move(s.funding, s.customer, UINT256_MAX - 5n)));
    const t = ok(
      await postTransfer(ctx, {
        kind: "standard",
        idempotencyKey: key(),
        legs: [
          { debitAccountId: s.customer, creditAccountId: s.op, amount: UINT256_MAX - 100n },
          { debitAccountId: s.customer, creditAccountId: fees, amount: 95n },
        ],
      }),
    );
    expect(t.status).toBe("posted");
    expect((await getBalance(db, s.customer))!.available).toBe(0n);
    expect((await getBalance(db, s.op))!.posted).toBe(UINT256_MAX - 100n);
    expect(await getTransfer(db, t.id)).toMatchObject({ id: t.id, legs: t.legs, status: "posted" });
  });

  it("refuses bad requests with typed errors and writes nothing", async () => {
    const s = await setup();
    const other = await anAsset(db);
    const foreign = (await anAccount(db, other.id)).id;
    ok(await postTransfer(ctx, move(s.funding, s.customer, 10n)));
    const before = await tableCounts(db);
    const results = await postTransfers(ctx, [
      { kind: "standard", idempotencyKey: key(), legs: [] },
      move(s.customer, s.op, 0n),
      move(s.customer, s.op, -1n),
      move(s.customer, s.op, UINT256_MAX + 1n),
      move(s.customer, foreign, 1n),
      move(s.customer, uuidv7(), 1n),
      move(s.customer, s.op, 11n),
      move(s.customer, s.customer, 1n),
      { kind: "standard", idempotencyKey: key(), legs: [{ debitAccountId: s.customer, creditAccountId: s.op, amount: 1 as unknown as bigint }] },
      { kind: "post_pending", idempotencyKey: key(), pendingId: uuidv7() },
      { kind: "reversal", idempotencyKey: key(), reversesId: uuidv7() },
    ]);
    expect(results.map(refused)).toEqual([
      "invalid_request",
      "invalid_request",
      "invalid_request",
      "invalid_request",
      "asset_mismatch",
      "account_not_found",
      "exceeds_credits",
      "invalid_request",
      "invalid_request",
      "pending_not_found",
      "transfer_not_found",
    ]);
    expect(await tableCounts(db)).toEqual(before);
  });

  it("replays the same key and request; refuses the same key with another request", async () => {
    const s = await setup();
    const req = move(s.funding, s.customer, 5n, { metadata: { job: "j1" } });
    const first = ok(await postTransfer(ctx, req));
    const again = await postTransfer(ctx, { ...req, metadata: { job: "j1" } });
    expect(again).toMatchObject({ ok: true, replayed: true, transfer: { id: first.id, status: "posted" } });
    const changed = move(s.funding, s.customer, 6n, { idempotencyKey: req.idempotencyKey, metadata: { job: "j1" } });
    expect(refused(await postTransfer(ctx, changed))).toBe("idempotency_conflict");
    expect((await getBalance(db, s.customer))!.posted).toBe(5n);
  });

  it("sees earlier requests of the same batch, including holds posted in the batch", async () => {
    const s = await setup();
    const hold = uuidv7();
    const results = await postTransfers(ctx, [
      move(s.funding, s.customer, 100n),
      { kind: "pending", id: hold, idempotencyKey: key(), legs: [{ debitAccountId: s.customer, creditAccountId: s.op, amount: 70n }] },
      move(s.customer, s.op, 31n),
      { kind: "post_pending", idempotencyKey: key(), pendingId: hold, amount: 60n },
      move(s.customer, s.op, 40n),
    ]);
    expect(results.map((r) => (r.ok ? "ok" : r.error.code))).toEqual(["ok", "ok", "exceeds_credits", "ok", "ok"]);
    expect(await getBalance(db, s.customer)).toMatchObject({ posted: 0n, available: 0n, debitsPending: 0n });
  });
});

describe("two-phase", () => {
  it("holds, posts partially, voids, and refuses a second resolution", async () => {
    const s = await setup();
    ok(await postTransfer(ctx, move(s.funding, s.customer, 100n)));
    const hold = ok(
      await postTransfer(ctx, { kind: "pending", idempotencyKey: key(), legs: [{ debitAccountId: s.customer, creditAccountId: s.op, amount: 80n }] }),
    );
    expect(await getBalance(db, s.customer)).toMatchObject({ posted: 100n, available: 20n });
    ok(await postTransfer(ctx, { kind: "post_pending", idempotencyKey: key(), pendingId: hold.id, amount: 30n }));
    expect(await getBalance(db, s.customer)).toMatchObject({ posted: 70n, available: 70n, debitsPending: 0n });
    expect(await getBalance(db, s.op)).toMatchObject({ posted: 30n, creditsPending: 0n });
    expect((await getTransfer(db, hold.id))!.status).toBe("posted");
    expect(refused(await postTransfer(ctx, { kind: "void_pending", idempotencyKey: key(), pendingId: hold.id }))).toBe("pending_already_posted");

    const hold2 = ok(
      await postTransfer(ctx, { kind: "pending", idempotencyKey: key(), legs: [{ debitAccountId: s.customer, creditAccountId: s.op, amount: 70n }] }),
    );
    ok(await postTransfer(ctx, { kind: "void_pending", idempotencyKey: key(), pendingId: hold2.id }));
    expect((await getTransfer(db, hold2.id))!.status).toBe("voided");
    expect(refused(await postTransfer(ctx, { kind: "post_pending", idempotencyKey: key(), pendingId: hold2.id }))).toBe("pending_already_voided");
    expect(await getBalance(db, s.customer)).toMatchObject({ available: 70n });
  });

  it("expires timed-out holds through the worker, once, and then refuses to post them", async () => {
    const s = await setup();
    ok(await postTransfer(ctx, move(s.funding, s.customer, 50n)));
    const hold = ok(
      await postTransfer(ctx, {
        kind: "pending",
        idempotencyKey: key(),
        timeoutSeconds: 1,
        legs: [{ debitAccountId: s.customer, creditAccountId: s.op, amount: 50n }],
      }),
    );
    expect(hold.timeoutAt!.getTime() - hold.createdAt.getTime()).toBe(1000);
    expect(await getBalance(db, s.customer)).toMatchObject({ available: 0n });
    await new Promise((r) => setTimeout(r, 1100));
    expect(refused(await postTransfer(ctx, { kind: "post_pending", idempotencyKey: key(), pendingId: hold.id }))).toBe("pending_expired");
    const [a, b] = await Promise.all([expireHolds(db), expireHolds(db)]);
    expect(a + b).toBeGreaterThanOrEqual(1);
    expect(await expireHolds(db)).toBe(0);
    expect((await getTransfer(db, hold.id))!.status).toBe("expired");
    expect(await getBalance(db, s.customer)).toMatchObject({ available: 50n, debitsPending: 0n });
  });
});

describe("history", () => {
  it("reverses a transfer with a reference to it, once", async () => {
    const s = await setup();
    const t = ok(await postTransfer(ctx, move(s.funding, s.op, 12n)));
    const r = ok(await postTransfer(ctx, { kind: "reversal", idempotencyKey: key(), reversesId: t.id, metadata: { reason: "duplicate usage" } }));
    expect(r.reversesId).toBe(t.id);
    expect((await getTransfer(db, t.id))!.status).toBe("reversed");
    expect(await getBalance(db, s.op)).toMatchObject({ posted: 0n, debitsPosted: 12n, creditsPosted: 12n });
    expect(refused(await postTransfer(ctx, { kind: "reversal", idempotencyKey: key(), reversesId: t.id }))).toBe("already_reversed");
  });

  it("is append-only in the database itself", async () => {
    const s = await setup();
    const t = ok(await postTransfer(ctx, move(s.funding, s.op, 3n)));
    await expect(db.query("update transfers set metadata = '{}' where id = $1", [t.id])).rejects.toThrow(/append-only/);
    await expect(db.query("delete from transfers where id = $1", [t.id])).rejects.toThrow(/append-only/);
    await expect(db.query("update entries set posted_amount = 4 where transfer_id = $1", [t.id])).rejects.toThrow(/append-only/);
    await expect(db.query("delete from entries where transfer_id = $1", [t.id])).rejects.toThrow(/append-only/);
    await expect(db.query("truncate entries cascade")).rejects.toThrow(/append-only/);
    await expect(db.query("update accounts set normal_side = 'debit' where id = $1", [s.op])).rejects.toThrow(/only the metadata/);
    await expect(db.query("update accounts set metadata = '{\"note\": 1}' where id = $1", [s.op])).resolves.toBeDefined();
  });

  it("reads balances as of any effective instant, late records included", async () => {
    const s = await setup();
    const day = (d: number) => new Date(Date.UTC(2026, 0, d));
    ok(await postTransfer(ctx, move(s.funding, s.op, 10n, { effectiveAt: day(10) })));
    ok(await postTransfer(ctx, move(s.funding, s.op, 20n, { effectiveAt: day(20) })));
    ok(await postTransfer(ctx, move(s.funding, s.op, 5n, { effectiveAt: day(5) }))); // recorded late
    expect((await getBalanceAsOf(db, s.op, day(1)))!.posted).toBe(0n);
    expect((await getBalanceAsOf(db, s.op, day(5)))!.posted).toBe(5n);
    expect((await getBalanceAsOf(db, s.op, day(15)))!.posted).toBe(15n);
    expect((await getBalanceAsOf(db, s.op, day(25)))!.posted).toBe(35n);
    expect(await getBalanceAsOf(db, uuidv7(), day(25))).toBeUndefined();
  });

  it("pages through an account's entries with a stable cursor and a running balance", async () => {
    const s = await setup();
    const amounts = Array.from({ length: 25 }, (_, i) => BigInt(i + 1));
    await postTransfers(
      ctx,
      amounts.map((a) => move(s.funding, s.op, a)),
    );
    const seen: bigint[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await listEntries(db, s.op, { cursor, limit: 10 });
      pages++;
      for (const e of page.items) {
        seen.push(e.postedAmount);
        expect(e.balanceAfter).toBe(amounts.slice(0, seen.length).reduce((x, y) => x + y, 0n));
      }
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(amounts);
    const desc = await listEntries(db, s.op, { limit: 3, order: "desc" });
    expect(desc.items.map((e) => e.postedAmount)).toEqual([25n, 24n, 23n]);
    await expect(listEntries(db, s.op, { cursor: "garbage" })).rejects.toThrow(/cursor/);
  });

  it("pages in numeric id order past ids of different lengths (9 → 10 → 100)", async () => {
    const s = await setup();
    await postTransfers(
      ctx,
      Array.from({ length: 120 }, () => move(s.funding, s.op, 1n)),
    );
    const ids: bigint[] = [];
    let cursor: string | undefined;
    do {
      const page = await listEntries(db, s.op, { cursor, limit: 7 });
      ids.push(...page.items.map((e) => BigInt(e.id)));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(ids.length).toBe(120);
    expect([...ids].sort((a, b) => (a < b ? -1 : 1))).toEqual(ids);
    const newest = await listEntries(db, s.op, { limit: 1, order: "desc" });
    expect(BigInt(newest.items[0]!.id)).toBe(ids[ids.length - 1]);
  });
});
