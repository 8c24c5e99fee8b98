import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { brokenLimit, zeroBalances, type Balances } from "../../src/domain/accounts.js";
import { LedgerError } from "../../src/domain/errors.js";
import { uuidv7 } from "../../src/domain/ids.js";
import { LedgerState, type EntryRecord } from "../../src/domain/posting.js";
import { opArb, toInput } from "../support/ops.js";

const ASSETS = [uuidv7(), uuidv7()];

/** Builds a ledger of 6 accounts over 2 assets with mixed flags and sides. */
function newLedger() {
  const state = new LedgerState(new Date("2026-01-01T00:00:00Z"));
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) {
    const id = uuidv7();
    ids.push(id);
    state.accounts.set(id, {
      id,
      assetId: ASSETS[i % 2]!,
      normalSide: i % 3 === 2 ? "debit" : "credit",
      balances: zeroBalances(),
      debitsMustNotExceedCredits: i % 3 === 1,
      creditsMustNotExceedDebits: i === 5,
    });
  }
  return { state, ids };
}

function checkInvariants(state: LedgerState, entries: EntryRecord[]) {
  // Per asset: total debits equal total credits, posted and pending.
  for (const asset of ASSETS) {
    const sum = { dp: 0n, cp: 0n, dpe: 0n, cpe: 0n };
    for (const a of state.accounts.values()) {
      if (a.assetId !== asset) continue;
      sum.dp += a.balances.debitsPosted;
      sum.cp += a.balances.creditsPosted;
      sum.dpe += a.balances.debitsPending;
      sum.cpe += a.balances.creditsPending;
    }
    expect(sum.dp).toBe(sum.cp);
    expect(sum.dpe).toBe(sum.cpe);
  }
  // Each account: balances equal the sum of its entries; limits hold; nothing negative.
  const fromEntries = new Map<string, Balances>();
  for (const e of entries) {
    const b = fromEntries.get(e.accountId) ?? zeroBalances();
    if (e.side === "debit") {
      b.debitsPosted += e.postedAmount;
      b.debitsPending += e.pendingAmount;
    } else {
      b.creditsPosted += e.postedAmount;
      b.creditsPending += e.pendingAmount;
    }
    fromEntries.set(e.accountId, b);
  }
  for (const a of state.accounts.values()) {
    expect(a.balances).toEqual(fromEntries.get(a.id) ?? zeroBalances());
    expect(brokenLimit(a, a.balances)).toBeUndefined();
    for (const v of Object.values(a.balances)) expect(v >= 0n).toBe(true);
  }
}

describe("ledger rules under random operations", () => {
  it("keep every invariant after any sequence of transfers, holds, posts, voids, expiries and reversals", () => {
    fc.assert(
      fc.property(fc.array(opArb(6), { minLength: 1, maxLength: 60 }), (ops) => {
        const { state, ids } = newLedger();
        const created: string[] = [];
        const entries: EntryRecord[] = [];
        ops.forEach((op, i) => {
          if (op.op === "tick") {
            state.now = new Date(state.now.getTime() + 1000);
            return;
          }
          const input = toInput(op, `k${i}`, ids, created, uuidv7())!;
          const before = JSON.stringify(
            [...state.accounts.values()].map((a) => a.balances),
            (_, v) => (typeof v === "bigint" ? v.toString() : v),
          );
          try {
            const r = state.execute(input, uuidv7());
            if (r.status === "created") {
              created.push(r.transfer.id);
              entries.push(...r.entries);
            }
          } catch (err) {
            if (!(err instanceof LedgerError)) throw err;
            const after = JSON.stringify(
              [...state.accounts.values()].map((a) => a.balances),
              (_, v) => (typeof v === "bigint" ? v.toString() : v),
            );
            expect(after).toBe(before); // a refusal changes nothing
          }
          checkInvariants(state, entries);
        });
      }),
      { numRuns: 300 },
    );
  });

  it("a reversal restores both accounts exactly", () => {
    fc.assert(
      fc.property(fc.array(fc.bigInt({ min: 1n, max: 10n ** 30n }), { minLength: 1, maxLength: 5 }), (amounts) => {
        const { state, ids } = newLedger();
        const [a, b] = [ids[0]!, ids[2]!];
        const before = [structuredClone(state.accounts.get(a)!.balances), structuredClone(state.accounts.get(b)!.balances)];
        const r = state.execute(
          { kind: "standard", idempotencyKey: "t", legs: amounts.map((amount) => ({ debitAccountId: a, creditAccountId: b, amount })) },
          uuidv7(),
        );
        if (r.status !== "created") throw new Error("expected a transfer");
        state.execute({ kind: "reversal", idempotencyKey: "r", reversesId: r.transfer.id }, uuidv7());
        const total = amounts.reduce((x, y) => x + y, 0n);
        expect(state.accounts.get(a)!.balances).toEqual({ ...before[0], debitsPosted: total, creditsPosted: total });
        expect(state.accounts.get(b)!.balances).toEqual({ ...before[1], debitsPosted: total, creditsPosted: total });
      }),
    );
  });
});
