import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getBalance } from "../../src/db/queries/accounts.js";
import { writeTransfers } from "../../src/db/transfer-writer.js";
import { zeroBalances } from "../../src/domain/accounts.js";
import { LedgerError } from "../../src/domain/errors.js";
import { uuidv7 } from "../../src/domain/ids.js";
import { LedgerState } from "../../src/domain/posting.js";
import type { TransferInput } from "../../src/domain/transfers.js";
import { createAccount } from "../../src/services/create-account.js";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { freshDatabase, type TestDatabase } from "../support/db.js";
import { anAsset } from "../support/fixtures.js";
import { opArb, toInput } from "../support/ops.js";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(async () => {
  await db.destroy();
});

/**
 * The database against the rules run in memory: random batches of transfers, holds, posts, voids,
 * reversals (and refused requests of every kind) give the same per-request outcome and the same
 * balances in both, and the whole database passes verify after every run.
 */
describe("database ledger matches the in-memory model", () => {
  it("for random batches of operations", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(opArb(5), { minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 6 }), async (batches) => {
        run++;
        const asset = await anAsset(db);
        const model = new LedgerState(new Date());
        const accountIds: string[] = [];
        for (let i = 0; i < 5; i++) {
          const flags = { debitsMustNotExceedCredits: i === 1 || i === 3, creditsMustNotExceedDebits: i === 2 };
          const normalSide = i % 3 === 2 ? ("debit" as const) : ("credit" as const);
          const a = await createAccount(db, { assetId: asset.id, code: "prop", normalSide, ...flags });
          accountIds.push(a.id);
          model.accounts.set(a.id, { id: a.id, assetId: asset.id, normalSide, balances: zeroBalances(), ...flags });
        }
        const created: string[] = [];
        let previous: TransferInput[] = [];
        let n = 0;
        for (const batch of batches) {
          const inputs = batch
            .map((op) => toInput(op.op === "hold" ? { ...op, timeout: false } : op, `r${run}-${n++}`, accountIds, created, uuidv7()))
            .filter((i): i is TransferInput => i !== undefined);
          // Retries: the first request of the previous batch again, as it was (replay or a fresh try).
          if (previous[0]) inputs.push(previous[0]);
          previous = inputs;
          const results = await writeTransfers(db, inputs);
          inputs.forEach((input, i) => {
            const r = results[i]!;
            let expected: string;
            try {
              const m = model.execute(input, r.ok ? r.transfer.id : uuidv7());
              expected = m.status === "created" ? "created" : "replayed";
            } catch (err) {
              if (!(err instanceof LedgerError)) throw err;
              expected = err.code;
            }
            expect(r.ok ? (r.replayed ? "replayed" : "created") : r.error.code).toBe(expected);
            if (r.ok && !r.replayed) created.push(r.transfer.id);
          });
        }
        for (const id of accountIds) {
          const { debitsPosted, creditsPosted, debitsPending, creditsPending } = (await getBalance(db, id))!;
          expect({ debitsPosted, creditsPosted, debitsPending, creditsPending }).toEqual(model.accounts.get(id)!.balances);
        }
        expect((await verifyLedger(db)).violations).toEqual([]);
      }),
      { numRuns: 25 },
    );
  });
});
