import { describe, expect, it } from "vitest";
import { availableBalance, zeroBalances } from "../../src/domain/accounts.js";
import { LedgerError } from "../../src/domain/errors.js";
import { uuidv7 } from "../../src/domain/ids.js";
import { UINT256_MAX } from "../../src/domain/money.js";
import { LedgerState } from "../../src/domain/posting.js";
import type { TransferInput } from "../../src/domain/transfers.js";

const USD = uuidv7();
const EUR = uuidv7();

/** A request without its key (the helper adds one); distributes over the union of kinds. */
type Req = TransferInput extends infer T ? (T extends TransferInput ? Omit<T, "idempotencyKey"> & { idempotencyKey?: string } : never) : never;

function ledger() {
  const state = new LedgerState(new Date("2026-01-01T00:00:00Z"));
  const open = (assetId = USD, flags: { dmnec?: boolean; cmned?: boolean } = {}, normalSide: "debit" | "credit" = "credit") => {
    const id = uuidv7();
    state.accounts.set(id, {
      id,
      assetId,
      normalSide,
      balances: zeroBalances(),
      debitsMustNotExceedCredits: flags.dmnec ?? false,
      creditsMustNotExceedDebits: flags.cmned ?? false,
    });
    return id;
  };
  let k = 0;
  const run = (input: Req) => state.execute({ idempotencyKey: `k${++k}`, ...input } as TransferInput, uuidv7());
  const created = (input: Req) => {
    const r = run(input);
    if (r.status !== "created") throw new Error("expected a new transfer");
    return r.transfer;
  };
  const refusal = (input: Req) => {
    try {
      run(input);
    } catch (err) {
      expect(err).toBeInstanceOf(LedgerError);
      return (err as LedgerError).code;
    }
    throw new Error("expected a refusal");
  };
  return { state, open, run, created, refusal, bal: (id: string) => state.accounts.get(id)!.balances };
}

describe("posting rules", () => {
  it("moves value from the debit to the credit account", () => {
    const l = ledger();
    const [funding, customer] = [l.open(), l.open()];
    l.created({ kind: "standard", legs: [{ debitAccountId: funding, creditAccountId: customer, amount: 100n }] });
    expect(l.bal(funding)).toMatchObject({ debitsPosted: 100n, creditsPosted: 0n });
    expect(l.bal(customer)).toMatchObject({ debitsPosted: 0n, creditsPosted: 100n });
  });

  it("applies all legs or none", () => {
    const l = ledger();
    const [funding, customer, op, fees] = [l.open(), l.open(USD, { dmnec: true }), l.open(), l.open()];
    l.created({ kind: "standard", legs: [{ debitAccountId: funding, creditAccountId: customer, amount: 50n }] });
    const code = l.refusal({
      kind: "standard",
      legs: [
        { debitAccountId: customer, creditAccountId: op, amount: 40n },
        { debitAccountId: customer, creditAccountId: fees, amount: 20n },
      ],
    });
    expect(code).toBe("exceeds_credits");
    expect(l.bal(op).creditsPosted).toBe(0n);
    expect(l.bal(customer).debitsPosted).toBe(0n);
  });

  it("refuses bad input with typed errors", () => {
    const l = ledger();
    const [a, b, e] = [l.open(), l.open(), l.open(EUR)];
    const leg = (amount: bigint, debitAccountId = a, creditAccountId = b) => ({
      kind: "standard" as const,
      legs: [{ debitAccountId, creditAccountId, amount }],
    });
    expect(l.refusal(leg(0n))).toBe("invalid_request");
    expect(l.refusal(leg(-5n))).toBe("invalid_request");
    expect(l.refusal(leg(UINT256_MAX + 1n))).toBe("invalid_request");
    expect(l.refusal({ kind: "standard", legs: [{ debitAccountId: a, creditAccountId: b, amount: 5 as unknown as bigint }] })).toBe("invalid_request");
    expect(l.refusal(leg(1n, a, a))).toBe("invalid_request");
    expect(l.refusal({ kind: "standard", legs: [] })).toBe("invalid_request");
    expect(l.refusal(leg(1n, a, e))).toBe("asset_mismatch");
    expect(l.refusal(leg(1n, a, uuidv7()))).toBe("account_not_found");
    expect(l.refusal(leg(1n, "not-a-uuid"))).toBe("invalid_request");
    expect(l.refusal({ ...leg(1n), idempotencyKey: "" })).toBe("invalid_request");
    expect(l.refusal({ ...leg(1n), metadata: { bad: 1n } })).toBe("invalid_request");
    expect(l.state.transfers.size).toBe(0);
  });

  it("names every invalid field", () => {
    const l = ledger();
    try {
      l.run({ kind: "standard", legs: [{ debitAccountId: "x", creditAccountId: "y", amount: 0n }] });
    } catch (err) {
      expect((err as LedgerError).issues.map((i) => i.path)).toEqual(["legs.0.debitAccountId", "legs.0.creditAccountId", "legs.0.amount"]);
      return;
    }
    throw new Error("expected a refusal");
  });

  it("refuses a balance past uint256", () => {
    const l = ledger();
    const [a, b] = [l.open(), l.open()];
    l.created({ kind: "standard", legs: [{ debitAccountId: a, creditAccountId: b, amount: UINT256_MAX }] });
    expect(l.refusal({ kind: "standard", legs: [{ debitAccountId: a, creditAccountId: b, amount: 1n }] })).toBe("overflow");
  });

  it("enforces credits_must_not_exceed_debits", () => {
    const l = ledger();
    const [asset, other] = [l.open(USD, { cmned: true }, "debit"), l.open()];
    expect(l.refusal({ kind: "standard", legs: [{ debitAccountId: other, creditAccountId: asset, amount: 1n }] })).toBe("exceeds_debits");
  });

  it("replays the same key and request, refuses the same key with another request", () => {
    const l = ledger();
    const [a, b] = [l.open(), l.open()];
    const t = l.created({ idempotencyKey: "once", kind: "standard", legs: [{ debitAccountId: a, creditAccountId: b, amount: 7n }] });
    expect(l.run({ idempotencyKey: "once", kind: "standard", legs: [{ debitAccountId: a, creditAccountId: b, amount: 7n }] })).toEqual({
      status: "replayed",
      transferId: t.id,
    });
    expect(l.refusal({ idempotencyKey: "once", kind: "standard", legs: [{ debitAccountId: a, creditAccountId: b, amount: 8n }] })).toBe("idempotency_conflict");
    expect(l.bal(b).creditsPosted).toBe(7n);
  });
});

describe("two-phase transfers", () => {
  function funded() {
    const l = ledger();
    const [funding, customer, op] = [l.open(), l.open(USD, { dmnec: true }), l.open()];
    l.created({ kind: "standard", legs: [{ debitAccountId: funding, creditAccountId: customer, amount: 100n }] });
    return { ...l, customer, op };
  }

  it("reserves with a hold, so available drops but posted does not", () => {
    const l = funded();
    l.created({ kind: "pending", legs: [{ debitAccountId: l.customer, creditAccountId: l.op, amount: 60n }] });
    expect(availableBalance("credit", l.bal(l.customer))).toBe(40n);
    expect(l.bal(l.customer).creditsPosted - l.bal(l.customer).debitsPosted).toBe(100n);
    expect(l.refusal({ kind: "pending", legs: [{ debitAccountId: l.customer, creditAccountId: l.op, amount: 41n }] })).toBe("exceeds_credits");
  });

  it("insufficient funds says what is available, what the transfer takes and how much is missing", () => {
    const l = funded();
    l.created({ kind: "pending", legs: [{ debitAccountId: l.customer, creditAccountId: l.op, amount: 60n }] });
    let message = "";
    try {
      l.run({ kind: "standard", legs: [{ debitAccountId: l.customer, creditAccountId: l.op, amount: 55n }] });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toBe(`insufficient funds on account ${l.customer}: 40 available, this transfer takes 55, 15 short (amounts in the asset's smallest unit)`);
  });

  it("posts part of a hold and releases the rest", () => {
    const l = funded();
    const hold = l.created({ kind: "pending", legs: [{ debitAccountId: l.customer, creditAccountId: l.op, amount: 60n }] });
    l.created({ kind: "post_pending", pendingId: hold.id, amount: 25n });
    expect(l.bal(l.customer)).toMatchObject({ debitsPosted: 25n, debitsPending: 0n });
    expect(l.bal(l.op)).toMatchObject({ creditsPosted: 25n, creditsPending: 0n });
    expect(l.refusal({ kind: "post_pending", pendingId: hold.id })).toBe("pending_already_posted");
    expect(l.refusal({ kind: "void_pending", pendingId: hold.id })).toBe("pending_already_posted");
  });

  it("voids a hold, after which it cannot be posted", () => {
    const l = funded();
    const hold = l.created({ kind: "pending", legs: [{ debitAccountId: l.customer, creditAccountId: l.op, amount: 60n }] });
    l.created({ kind: "void_pending", pendingId: hold.id });
    expect(availableBalance("credit", l.bal(l.customer))).toBe(100n);
    expect(l.refusal({ kind: "post_pending", pendingId: hold.id })).toBe("pending_already_voided");
  });

  it("refuses amounts past the hold and partial posts of multi-leg holds", () => {
    const l = funded();
    const hold = l.created({ kind: "pending", legs: [{ debitAccountId: l.customer, creditAccountId: l.op, amount: 60n }] });
    expect(l.refusal({ kind: "post_pending", pendingId: hold.id, amount: 61n })).toBe("post_amount_exceeds_pending");
    const two = l.created({
      kind: "pending",
      legs: [
        { debitAccountId: l.customer, creditAccountId: l.op, amount: 10n },
        { debitAccountId: l.customer, creditAccountId: l.op, amount: 5n },
      ],
    });
    expect(l.refusal({ kind: "post_pending", pendingId: two.id, amount: 3n })).toBe("partial_post_needs_single_leg");
    l.created({ kind: "post_pending", pendingId: two.id });
    expect(l.bal(l.op).creditsPosted).toBe(15n);
  });

  it("expires a hold after its timeout, and then refuses to post or void it", () => {
    const l = funded();
    const hold = l.created({ kind: "pending", timeoutSeconds: 60, legs: [{ debitAccountId: l.customer, creditAccountId: l.op, amount: 60n }] });
    expect(l.refusal({ kind: "expire_pending", pendingId: hold.id })).toBe("invalid_request");
    l.state.now = new Date(l.state.now.getTime() + 60_000);
    expect(l.refusal({ kind: "post_pending", pendingId: hold.id })).toBe("pending_expired");
    expect(l.refusal({ kind: "void_pending", pendingId: hold.id })).toBe("pending_expired");
    l.created({ kind: "expire_pending", pendingId: hold.id });
    expect(availableBalance("credit", l.bal(l.customer))).toBe(100n);
    expect(l.refusal({ kind: "expire_pending", pendingId: hold.id })).toBe("pending_expired");
  });

  it("refuses to resolve what is not a hold", () => {
    const l = funded();
    const t = l.created({ kind: "standard", legs: [{ debitAccountId: l.customer, creditAccountId: l.op, amount: 1n }] });
    expect(l.refusal({ kind: "post_pending", pendingId: t.id })).toBe("not_pending");
    expect(l.refusal({ kind: "void_pending", pendingId: uuidv7() })).toBe("pending_not_found");
  });
});

describe("reversals", () => {
  it("undoes a posted transfer once, referencing it", () => {
    const l = ledger();
    const [a, b] = [l.open(), l.open()];
    const t = l.created({ kind: "standard", legs: [{ debitAccountId: a, creditAccountId: b, amount: 9n }] });
    const r = l.created({ kind: "reversal", reversesId: t.id });
    expect(r.reversesId).toBe(t.id);
    expect(r.legs[0]).toMatchObject({ debitAccountId: b, creditAccountId: a, postedAmount: 9n });
    expect(l.bal(a).debitsPosted - l.bal(a).creditsPosted).toBe(0n);
    expect(l.refusal({ kind: "reversal", reversesId: t.id })).toBe("already_reversed");
    expect(l.refusal({ kind: "reversal", reversesId: r.id })).toBe("not_reversible");
    expect(l.refusal({ kind: "reversal", reversesId: uuidv7() })).toBe("transfer_not_found");
  });

  it("reverses the posted part of a partially posted hold; holds themselves are voided instead", () => {
    const l = ledger();
    const [a, b] = [l.open(), l.open()];
    const hold = l.created({ kind: "pending", legs: [{ debitAccountId: a, creditAccountId: b, amount: 10n }] });
    expect(l.refusal({ kind: "reversal", reversesId: hold.id })).toBe("not_reversible");
    const post = l.created({ kind: "post_pending", pendingId: hold.id, amount: 4n });
    l.created({ kind: "reversal", reversesId: post.id });
    expect(l.bal(b)).toMatchObject({ creditsPosted: 4n, debitsPosted: 4n, creditsPending: 0n });
  });

  it("respects no-overdraft limits: a reversal cannot take back funds already spent", () => {
    const l = ledger();
    const [funding, customer, op] = [l.open(), l.open(USD, { dmnec: true }), l.open()];
    const deposit = l.created({ kind: "standard", legs: [{ debitAccountId: funding, creditAccountId: customer, amount: 10n }] });
    l.created({ kind: "standard", legs: [{ debitAccountId: customer, creditAccountId: op, amount: 8n }] });
    expect(l.refusal({ kind: "reversal", reversesId: deposit.id })).toBe("exceeds_credits");
  });
});

describe("effective times", () => {
  const now = new Date("2026-01-01T00:00:00Z");
  const at = (ms: number) => new Date(now.getTime() + ms);
  const issuesOf = (l: ReturnType<typeof ledger>, input: Req) => {
    try {
      l.run(input);
    } catch (err) {
      return { code: (err as LedgerError).code, paths: (err as LedgerError).issues.map((i) => i.path) };
    }
    throw new Error("expected a refusal");
  };

  it("are at most 5 minutes after the clock's now, whatever the kind", () => {
    const l = ledger();
    const [a, b] = [l.open(), l.open()];
    const legs = [{ debitAccountId: a, creditAccountId: b, amount: 1n }];
    const late = { code: "invalid_request", paths: ["effectiveAt"] };
    expect(issuesOf(l, { kind: "standard", legs, effectiveAt: new Date("9999-12-31T23:59:59Z") })).toEqual(late);
    expect(issuesOf(l, { kind: "pending", legs, effectiveAt: at(5 * 60_000 + 1) })).toEqual(late);
    const hold = l.created({ kind: "pending", legs });
    expect(issuesOf(l, { kind: "post_pending", pendingId: hold.id, effectiveAt: at(3_600_000) })).toEqual(late);
    const t = l.created({ kind: "standard", legs, effectiveAt: at(5 * 60_000) });
    expect(issuesOf(l, { kind: "reversal", reversesId: t.id, effectiveAt: at(10 * 60_000) })).toEqual(late);
    expect(l.state.transfers.size).toBe(2);
  });

  it("of a reversal or a post are never before the transfer they act on", () => {
    const l = ledger();
    const [a, b] = [l.open(), l.open()];
    const legs = [{ debitAccountId: a, creditAccountId: b, amount: 1n }];
    const t = l.created({ kind: "standard", legs, effectiveAt: at(-3_600_000) });
    const before = { code: "invalid_request", paths: ["effectiveAt"] };
    expect(issuesOf(l, { kind: "reversal", reversesId: t.id, effectiveAt: new Date(0) })).toEqual(before);
    expect(issuesOf(l, { kind: "reversal", reversesId: t.id, effectiveAt: at(-3_600_001) })).toEqual(before);
    const hold = l.created({ kind: "pending", legs, effectiveAt: at(-60_000) });
    expect(issuesOf(l, { kind: "post_pending", pendingId: hold.id, effectiveAt: at(-60_001) })).toEqual(before);
    // At the same instant, or later (by default, the original's and now): accepted.
    expect(l.created({ kind: "reversal", reversesId: t.id, effectiveAt: t.effectiveAt }).effectiveAt).toEqual(t.effectiveAt);
    expect(l.created({ kind: "post_pending", pendingId: hold.id }).effectiveAt).toEqual(now);
    // A hold dated ahead of the clock (within its skew), posted or voided without an instant: at the hold's.
    for (const kind of ["post_pending", "void_pending"] as const) {
      const ahead = l.created({ kind: "pending", legs, effectiveAt: at(4 * 60_000) });
      expect(l.created({ kind, pendingId: ahead.id }).effectiveAt).toEqual(ahead.effectiveAt);
    }
  });
});
