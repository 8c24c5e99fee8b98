import fc from "fast-check";
import type { TransferInput } from "../../src/domain/transfers.js";

/**
 * Random ledger operations over a small set of accounts (by index) and earlier transfers (by
 * index into the list of transfers created so far), for property tests. Amounts stay small so that
 * limits are hit often; a few are huge so that overflow is exercised too.
 */
export type Op =
  | { op: "transfer"; legs: { from: number; to: number; amount: bigint }[] }
  | { op: "hold"; from: number; to: number; amount: bigint; timeout: boolean }
  | { op: "post"; target: number; amount?: bigint }
  | { op: "void"; target: number }
  | { op: "reverse"; target: number }
  | { op: "tick" }
  | { op: "expire"; target: number };

const amount = fc.oneof({ weight: 20, arbitrary: fc.bigInt({ min: 1n, max: 200n }) }, { weight: 1, arbitrary: fc.bigInt({ min: 1n, max: (1n << 256n) - 1n }) });

export const opArb = (accounts: number): fc.Arbitrary<Op> => {
  const account = fc.nat({ max: accounts - 1 });
  const target = fc.nat({ max: 40 });
  return fc.oneof(
    {
      weight: 5,
      arbitrary: fc.record({
        op: fc.constant("transfer" as const),
        legs: fc.array(fc.record({ from: account, to: account, amount }), { minLength: 1, maxLength: 3 }),
      }),
    },
    { weight: 3, arbitrary: fc.record({ op: fc.constant("hold" as const), from: account, to: account, amount, timeout: fc.boolean() }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant("post" as const), target, amount: fc.option(fc.bigInt({ min: 1n, max: 150n }), { nil: undefined }) }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant("void" as const), target }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant("reverse" as const), target }) },
    { weight: 1, arbitrary: fc.constant({ op: "tick" as const }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant("expire" as const), target }) },
  );
};

/** Turns an op into a request; `ids` are the transfers created so far (unknown ids are fine: they must be refused). */
export function toInput(op: Op, key: string, accountIds: string[], ids: string[], fallbackId: string): TransferInput | undefined {
  const ref = (i: number) => ids[i % Math.max(ids.length, 1)] ?? fallbackId;
  switch (op.op) {
    case "transfer":
      return {
        kind: "standard",
        idempotencyKey: key,
        legs: op.legs.map((l) => ({ debitAccountId: accountIds[l.from]!, creditAccountId: accountIds[l.to]!, amount: l.amount })),
      };
    case "hold":
      return {
        kind: "pending",
        idempotencyKey: key,
        timeoutSeconds: op.timeout ? 1 : undefined,
        legs: [{ debitAccountId: accountIds[op.from]!, creditAccountId: accountIds[op.to]!, amount: op.amount }],
      };
    case "post":
      return { kind: "post_pending", idempotencyKey: key, pendingId: ref(op.target), amount: op.amount };
    case "void":
      return { kind: "void_pending", idempotencyKey: key, pendingId: ref(op.target) };
    case "reverse":
      return { kind: "reversal", idempotencyKey: key, reversesId: ref(op.target) };
    case "expire":
      return { kind: "expire_pending", idempotencyKey: key, pendingId: ref(op.target) };
    case "tick":
      return undefined;
  }
}
