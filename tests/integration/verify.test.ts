import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeTransfers } from "../../src/db/transfer-writer.js";
import type { TransferInput } from "../../src/domain/transfers.js";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { sealJournal } from "../../src/db/journal-seals.js";
import { freshDatabase, testPooler, type TestDatabase } from "../support/db.js";
import { anAccount, anAsset, noOverdraft } from "../support/fixtures.js";
import { serviceProcessArgs } from "../support/service-build.js";

/**
 * A seal ends at the oldest transaction still running on the server, whichever database it is in:
 * while other test files write, a seal may have to wait a moment to cover this file's transfers.
 */
async function sealNow(...args: Parameters<typeof sealJournal>): ReturnType<typeof sealJournal> {
  for (let i = 0; i < 400; i++) {
    const seal = await sealJournal(...args);
    if (seal) return seal;
    await new Promise((r) => setTimeout(r, 25));
  }
  return undefined;
}

const run = promisify(execFile);

let db: TestDatabase;
let ids: { funding: string; customer: string; op: string };
let transferIds: string[];

beforeEach(async () => {
  db = await seeded(await freshDatabase());
});
afterEach(async () => {
  await db.destroy();
});

async function seeded(fresh: TestDatabase): Promise<TestDatabase> {
  const db = fresh;
  const asset = await anAsset(db);
  ids = {
    funding: (await anAccount(db, asset.id, { normalSide: "debit" })).id,
    customer: (await noOverdraft(db, asset.id)).id,
    op: (await anAccount(db, asset.id)).id,
  };
  const reqs: TransferInput[] = [
    { kind: "standard", idempotencyKey: "fund", legs: [{ debitAccountId: ids.funding, creditAccountId: ids.customer, amount: 100n }] },
    { kind: "standard", idempotencyKey: "use", legs: [{ debitAccountId: ids.customer, creditAccountId: ids.op, amount: 30n }] },
    { kind: "pending", idempotencyKey: "hold", legs: [{ debitAccountId: ids.customer, creditAccountId: ids.op, amount: 20n }] },
  ];
  transferIds = (await writeTransfers(db, reqs)).map((r) => (r.ok ? r.transfer.id : ""));
  return db;
}

/** Runs `npm run verify` as a user would, against this test's database. */
async function verifyCommand(): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, serviceProcessArgs("src/verify-cli.ts"), {
      env: { ...process.env, ...db.env, LOG_LEVEL: "silent" },
    });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout + e.stderr };
  }
}

describe("verify", () => {
  it("passes on a consistent ledger, sealed or not", async () => {
    expect(await verifyLedger(db)).toMatchObject({ ok: true, violations: [] });
    const seal = await sealNow(db);
    expect(seal).toMatchObject({ id: 1n, transferCount: 3 });
    expect(await sealJournal(db)).toBeUndefined();
    await writeTransfers(db, [{ kind: "void_pending", idempotencyKey: "void", pendingId: transferIds[2]! }]);
    expect(await sealNow(db)).toMatchObject({ id: 2n, transferCount: 1, prevHash: seal!.hash });
    expect(await verifyLedger(db)).toMatchObject({ ok: true, counts: { transfers: 4, seals: 2 } });
  });

  it("seals a backlog in bounded seals, never splitting a database transaction", async () => {
    for (let i = 0; i < 5; i++) {
      await writeTransfers(db, [
        { kind: "standard", idempotencyKey: `backlog-${i}`, legs: [{ debitAccountId: ids.funding, creditAccountId: ids.op, amount: 1n }] },
      ]);
    }
    const counts: number[] = [];
    // A seal ends at the oldest transaction still running on the server (other tests' too): seal until all are covered.
    for (let i = 0; i < 400 && counts.reduce((a, b) => a + b, 0) < 8; i++) {
      const seal = await sealJournal(db, 2);
      if (seal) counts.push(seal.transferCount);
      else await new Promise((r) => setTimeout(r, 25));
    }
    // The three transfers of the opening transaction stay together; then the five, two at a time.
    expect(counts.reduce((a, b) => a + b)).toBe(8);
    expect(Math.max(...counts.slice(1))).toBeLessThanOrEqual(2);
    expect(await verifyLedger(db)).toMatchObject({ ok: true });
  });

  it("keeps extending and verifying the chain past ten seals", async () => {
    for (let i = 0; i < 12; i++) {
      await writeTransfers(db, [
        { kind: "standard", idempotencyKey: `more-${i}`, legs: [{ debitAccountId: ids.funding, creditAccountId: ids.op, amount: 1n }] },
      ]);
      expect(await sealNow(db)).toMatchObject({ id: BigInt(i + 1) });
    }
    expect(await verifyLedger(db)).toMatchObject({ ok: true, counts: { seals: 12 } });
  });

  it("names a changed posted entry: broken hash chain and balances that no longer match", async () => {
    await sealNow(db);
    await db.query("alter table entries disable trigger entries_append_only");
    await db.query("update entries set posted_amount = 31 where transfer_id = $1 and side = 'credit'", [transferIds[1]]);
    const report = await verifyLedger(db);
    expect(report.ok).toBe(false);
    expect(report.violations.map((v) => v.check)).toEqual(expect.arrayContaining(["balanced_legs", "balances_match_entries", "hash_chain"]));
    expect(report.violations.find((v) => v.check === "hash_chain")!.detail).toMatch(/seal 1 .*changed after sealing/);
  });

  it("verifies seals of both digest formats in one chain, and names a change under either", async () => {
    expect(await sealNow(db, undefined, 1)).toMatchObject({ id: 1n, transferCount: 3 });
    await writeTransfers(db, [
      {
        kind: "standard",
        idempotencyKey: "after-format-1",
        metadata: { note: "sealed in format 2" },
        legs: [{ debitAccountId: ids.funding, creditAccountId: ids.op, amount: 1n }],
      },
    ]);
    expect(await sealNow(db)).toMatchObject({ id: 2n, transferCount: 1 });
    const formats = await db.query<{ format: number }>("select format from journal_seals order by id");
    expect(formats.map((f) => f.format)).toEqual([1, 2]);
    expect(await verifyLedger(db)).toMatchObject({ ok: true, counts: { seals: 2 } });

    // A change that only the hash chain sees (metadata), in the range of the format-2 seal.
    await db.query("alter table transfers disable trigger transfers_append_only");
    await db.query(`update transfers set metadata = '{"note": "changed"}' where idempotency_key = 'after-format-1'`);
    let chain = (await verifyLedger(db)).violations.filter((v) => v.check === "hash_chain");
    expect(chain.map((v) => v.detail)).toEqual([expect.stringMatching(/^seal 2 .*changed after sealing/)]);
    await db.query(`update transfers set metadata = '{"note": "sealed in format 2"}' where idempotency_key = 'after-format-1'`);
    expect(await verifyLedger(db)).toMatchObject({ ok: true });

    // And one in the range of the format-1 seal.
    await db.query("update transfers set metadata = '{\"x\": 1}' where id = $1", [transferIds[0]]);
    chain = (await verifyLedger(db)).violations.filter((v) => v.check === "hash_chain");
    expect(chain.map((v) => v.detail)).toEqual([expect.stringMatching(/^seal 1 .*changed after sealing/)]);
  });

  it("computes the same digests whatever the session's time zone and date style", async () => {
    // One connection, so that the session settings below apply to every statement that follows.
    const one = await seeded(await freshDatabase({ maxConnections: 1 }));
    try {
      await one.query("set timezone = 'UTC'");
      await one.query("set datestyle = 'ISO, YMD'");
      expect(await sealNow(one)).toMatchObject({ id: 1n, transferCount: 3 });
      await writeTransfers(one, [
        { kind: "pending", idempotencyKey: "with-timeout", timeoutSeconds: 3600, legs: [{ debitAccountId: ids.funding, creditAccountId: ids.op, amount: 1n }] },
      ]);
      await one.query("set timezone = 'Asia/Kolkata'");
      await one.query("set datestyle = 'SQL, DMY'");
      expect(await sealNow(one)).toMatchObject({ id: 2n, transferCount: 1 });
      for (const [tz, style] of [
        ["America/St_Johns", "German"],
        ["UTC", "Postgres, MDY"],
        ["Pacific/Chatham", "ISO, DMY"],
      ]) {
        await one.query(`set timezone = '${tz}'`);
        await one.query(`set datestyle = '${style}'`);
        expect(await verifyLedger(one)).toMatchObject({ ok: true, counts: { seals: 2 } });
      }
      // The session's own settings are left as they were.
      expect((await one.query<{ tz: string }>("select current_setting('TimeZone') as tz"))[0]!.tz).toBe("Pacific/Chatham");
    } finally {
      await one.destroy();
    }
  });

  it("names a seal whose digest format was changed", async () => {
    await sealNow(db);
    await db.query("alter table journal_seals disable trigger user");
    await db.query("update journal_seals set format = 1 where id = 1");
    expect((await verifyLedger(db)).violations.find((v) => v.check === "hash_chain")!.detail).toMatch(/seal 1 .*changed after sealing/);
    await db.query("update journal_seals set format = 7 where id = 1");
    expect((await verifyLedger(db)).violations.find((v) => v.check === "hash_chain")!.detail).toMatch(/seal 1 .*unknown digest format 7/);
  });

  it("names a deleted transfer in the hash chain", async () => {
    await sealNow(db);
    await db.query("alter table entries disable trigger entries_append_only");
    await db.query("alter table transfers disable trigger transfers_append_only");
    await db.query("delete from entries where transfer_id = $1", [transferIds[2]]);
    await db.query("delete from transfers where id = $1", [transferIds[2]]);
    const report = await verifyLedger(db);
    expect(report.violations.find((v) => v.check === "hash_chain")!.detail).toMatch(/covers 2 transfers now but sealed 3/);
  });

  it("names an entry whose account does not exist", async () => {
    await db.query(
      `insert into entries (transfer_id, leg, account_id, asset_id, side, posted_amount, pending_amount, balance_after, effective_at)
       select transfer_id, 9, '01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e', asset_id, side, posted_amount, pending_amount, balance_after, effective_at
         from entries where transfer_id = $1 limit 1`,
      [transferIds[0]],
    );
    const report = await verifyLedger(db);
    expect(report.violations.find((v) => v.check === "references")!.detail).toMatch(/names a missing account/);
  });

  it("names a balance edited behind the ledger's back, and an overdrawn account", async () => {
    await db.query("update account_balances set debits_posted = debits_posted + 500 where account_id = $1", [ids.customer]);
    const checks = (await verifyLedger(db)).violations.map((v) => v.check);
    expect(checks).toEqual(expect.arrayContaining(["balanced_assets", "balances_match_entries", "running_balance", "limits"]));
  });

  it("npm run verify exits 0 when the ledger holds and 1 naming the violation when it does not", async () => {
    await db.destroy();
    // The command opens the database itself: on PGlite it needs one on disk.
    db = await seeded(await freshDatabase({ onDisk: true }));
    await db.close();
    const good = await verifyCommand();
    expect(good.out).toMatch(/ledger OK/);
    expect(good.code).toBe(0);
    const reopened = await freshDatabaseFromEnv(db.env);
    await reopened.query("update account_balances set credits_posted = credits_posted + 1 where account_id = $1", [ids.op]);
    await reopened.close();
    const bad = await verifyCommand();
    expect(bad.code).toBe(1);
    expect(bad.out).toMatch(/VIOLATION balances_match_entries: account .* stored balances differ/);
  });
});

async function freshDatabaseFromEnv(env: Record<string, string>) {
  const { openDatabase } = await import("../../src/db/client.js");
  return openDatabase({ url: env.DATABASE_URL, dataDir: env.PGLITE_DATA_DIR, pooler: testPooler });
}
