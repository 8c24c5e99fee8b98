import type { Queryable } from "../../db/client.js";
import type { LedgerError } from "../../domain/errors.js";
import type { Attempt } from "./ledger-batch.js";
import { explainRefusals } from "./results.js";
import { usageKey, type OpenResults, type Planned, type UsageItem } from "./types.js";

/** What a batch's log keeps of a record's result. */
export type LoggedResult = { status: "accepted" | "duplicate" } | { status: "rejected"; error: LedgerError };

/** Accepted records of one asset: how many, and their gross in the asset's smallest unit. */
export interface AssetTotal {
  asset: string;
  records: number;
  gross: string;
}

/** Writes a batch's log in the transaction of its records, given each record's result (by place in the items) and the totals. */
export type BatchLogWriter = (tx: Queryable, results: LoggedResult[], totals: AssetTotal[]) => Promise<void>;

/**
 * The hook that writes the batch's log once the records are written, inside their transaction: the
 * results as the answer will give them (refusals explained as the answer explains them; repeats
 * within the batch as their first; records a concurrent request stored first as duplicates).
 */
export function batchLogHook(
  log: BatchLogWriter,
  items: UsageItem[],
  planned: Planned[],
  results: OpenResults,
  firstInBatch: Map<string, number>,
): (tx: Queryable, attempt: Attempt) => Promise<void> {
  return async (tx, attempt) => {
    const refusals = await explainRefusals(tx, planned, attempt.outcomes, attempt.accounts);
    const out: (LoggedResult | undefined)[] = [...results];
    const totals = new Map<string, { records: number; gross: bigint }>();
    planned.forEach((p, k) => {
      const refusal = refusals.get(k);
      const record = attempt.records.get(k);
      if (refusal) out[p.index] = { status: "rejected", error: refusal };
      else if (record) {
        out[p.index] = { status: "accepted" };
        const t = totals.get(p.item.input.asset) ?? { records: 0, gross: 0n };
        totals.set(p.item.input.asset, { records: t.records + 1, gross: t.gross + record.gross });
      }
    });
    items.forEach((item, i) => {
      if (out[i] !== undefined) return;
      const first = firstInBatch.get(usageKey(item.marketplaceId, item.input.externalId));
      const r = first !== undefined && first !== i ? out[first] : undefined;
      out[i] = r?.status === "rejected" ? r : { status: "duplicate" };
    });
    await log(
      tx,
      out as LoggedResult[],
      [...totals].sort(([a], [b]) => (a < b ? -1 : 1)).map(([asset, t]) => ({ asset, records: t.records, gross: t.gross.toString() })),
    );
  };
}
