/**
 * Matching the ledger's payouts against the payments the chain shows, with no I/O. The result is
 * a function of its inputs only, in a fixed order: the same range always gives the same items.
 */

export const itemStatuses = ["matched", "missing_on_chain", "unexpected_on_chain", "amount_mismatch", "recipient_mismatch"] as const;
export type ItemStatus = (typeof itemStatuses)[number];

export interface LedgerPayout {
  payoutId: string;
  /** confirmed, or a state before it (a payment the ledger has not confirmed yet). */
  status: string;
  /** Recorded as paid in a block of the range: the chain must show it. */
  inRange: boolean;
  amount: bigint;
  recipient: string;
  txHash: string | null;
  logIndex: number | null;
  blockNumber: bigint | null;
}

export interface ChainPayment {
  /** The payout id the vault's event carries (may be one the ledger never issued). */
  payoutId: string;
  amount: bigint;
  recipient: string;
  txHash: string;
  logIndex: number;
  blockNumber: bigint;
}

export interface ReconciliationItem {
  status: ItemStatus;
  direction: "in" | "out";
  payoutId: string | null;
  txHash: string | null;
  logIndex: number | null;
  blockNumber: bigint | null;
  ledgerAmount: bigint | null;
  chainAmount: bigint | null;
  ledgerAddress: string | null;
  chainAddress: string | null;
  detail: string;
}

/**
 * Each chain payment is matched to the ledger payout it names (chain, tx hash, log index / payout
 * id); a payout the chain does not show is missing, a payment no payout explains is unexpected.
 * A payment matched to a payout recorded with another transaction is unexpected too (the payout's
 * own transaction is then missing): two payments for one payout must never look fine. Only
 * payouts recorded as paid inside the range can be missing from it.
 */
export function matchPayouts(ledger: LedgerPayout[], chain: ChainPayment[]): ReconciliationItem[] {
  const byId = new Map(ledger.map((p) => [p.payoutId, p]));
  const seen = new Set<string>();
  const items: ReconciliationItem[] = [];
  const sorted = [...chain].sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1));
  for (const c of sorted) {
    const p = byId.get(c.payoutId);
    const base = {
      direction: "out" as const,
      txHash: c.txHash,
      logIndex: c.logIndex,
      blockNumber: c.blockNumber,
      chainAmount: c.amount,
      chainAddress: c.recipient,
    };
    if (!p || seen.has(p.payoutId) || p.status !== "confirmed" || (p.txHash !== null && p.txHash.toLowerCase() !== c.txHash.toLowerCase())) {
      const detail = !p
        ? `no ledger payout has id ${c.payoutId}`
        : p.status !== "confirmed"
          ? `payout ${p.payoutId} is ${p.status} in the ledger, not confirmed (rerun once the worker has confirmed it)`
          : `a payment for payout ${p.payoutId} in a transaction the ledger did not record for it`;
      items.push({ ...base, status: "unexpected_on_chain", payoutId: p ? p.payoutId : null, ledgerAmount: null, ledgerAddress: null, detail });
      continue;
    }
    seen.add(p.payoutId);
    const common = { ...base, payoutId: p.payoutId, ledgerAmount: p.amount, ledgerAddress: p.recipient };
    if (p.amount !== c.amount) items.push({ ...common, status: "amount_mismatch", detail: `the ledger paid ${p.amount}, the chain ${c.amount}` });
    else if (p.recipient.toLowerCase() !== c.recipient.toLowerCase())
      items.push({ ...common, status: "recipient_mismatch", detail: `the ledger paid ${p.recipient}, the chain ${c.recipient}` });
    else items.push({ ...common, status: "matched", detail: "" });
  }
  const missing = ledger.filter((p) => p.inRange && p.status === "confirmed" && !seen.has(p.payoutId)).sort((a, b) => (a.payoutId < b.payoutId ? -1 : 1));
  for (const p of missing) {
    items.push({
      status: "missing_on_chain",
      direction: "out",
      payoutId: p.payoutId,
      txHash: p.txHash,
      logIndex: p.logIndex,
      blockNumber: p.blockNumber,
      ledgerAmount: p.amount,
      chainAmount: null,
      ledgerAddress: p.recipient,
      chainAddress: null,
      detail: p.txHash
        ? `the ledger records it paid in ${p.txHash}, which holds no matching payment`
        : "the ledger records it paid; the chain shows no payment",
    });
  }
  return items;
}

export function summarize(items: ReconciliationItem[]): Record<ItemStatus, number> {
  const s = Object.fromEntries(itemStatuses.map((k) => [k, 0])) as Record<ItemStatus, number>;
  for (const i of items) s[i.status]++;
  return s;
}
