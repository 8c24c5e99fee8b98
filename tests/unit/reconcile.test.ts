import { describe, expect, it } from "vitest";
import { matchPayouts, summarize, type ChainPayment, type LedgerPayout } from "../../src/domain/reconcile.js";

const p = (id: string, amount: bigint, recipient = "0xaa", txHash: string | null = "0x01"): LedgerPayout => ({
  payoutId: id,
  status: "confirmed",
  inRange: true,
  amount,
  recipient,
  txHash,
  logIndex: 0,
  blockNumber: 5n,
});
const c = (id: string, amount: bigint, recipient = "0xaa", txHash = "0x01", logIndex = 0, blockNumber = 5n): ChainPayment => ({
  payoutId: id,
  amount,
  recipient,
  txHash,
  logIndex,
  blockNumber,
});

describe("matching ledger payouts against chain payments", () => {
  it("names each kind of difference", () => {
    const items = matchPayouts(
      [p("a", 10n), p("b", 20n), p("c", 30n), p("d", 40n)],
      [c("a", 10n, "0xaa", "0x01", 0), c("b", 21n, "0xaa", "0x01", 1), c("c", 30n, "0xbb", "0x01", 2), c("zz", 5n, "0xcc", "0x02", 0, 6n)],
    );
    expect(items.map((i) => [i.status, i.payoutId])).toEqual([
      ["matched", "a"],
      ["amount_mismatch", "b"],
      ["recipient_mismatch", "c"],
      ["unexpected_on_chain", null],
      ["missing_on_chain", "d"],
    ]);
    expect(summarize(items)).toEqual({ matched: 1, missing_on_chain: 1, unexpected_on_chain: 1, amount_mismatch: 1, recipient_mismatch: 1 });
  });

  it("a second payment for the same payout is unexpected; one in another transaction than recorded too", () => {
    const items = matchPayouts([p("a", 10n, "0xaa", "0x01")], [c("a", 10n, "0xaa", "0x01", 0), c("a", 10n, "0xaa", "0x09", 0, 9n)]);
    expect(items.map((i) => i.status)).toEqual(["matched", "unexpected_on_chain"]);
    const moved = matchPayouts([p("a", 10n, "0xaa", "0x01")], [c("a", 10n, "0xaa", "0x09")]);
    expect(moved.map((i) => i.status)).toEqual(["unexpected_on_chain", "missing_on_chain"]);
  });

  it("a payment of a payout not yet confirmed is reported as such; a payout recorded outside the range is not missing", () => {
    const flying = { ...p("a", 10n), status: "submitted", txHash: null };
    const items = matchPayouts([flying, { ...p("b", 5n), inRange: false }], [c("a", 10n)]);
    expect(items.map((i) => i.status)).toEqual(["unexpected_on_chain"]);
    expect(items[0]!.detail).toMatch(/submitted in the ledger/);
  });

  it("is a function of its inputs: order does not matter", () => {
    const ledger = [p("a", 1n), p("b", 2n)];
    const chain = [c("b", 2n, "0xaa", "0x01", 3), c("a", 1n, "0xaa", "0x01", 1)];
    expect(matchPayouts(ledger, chain)).toEqual(matchPayouts([...ledger].reverse(), [...chain].reverse()));
  });
});
