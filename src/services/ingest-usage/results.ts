import type { Database, Queryable } from "../../db/client.js";
import { getDebitHeadroom } from "../../db/queries/accounts.js";
import { findUsageByExternalIds } from "../../db/queries/usage.js";
import type { BatchOutcome } from "../../db/transfer-writer.js";
import { specKey } from "../../domain/chart.js";
import { LedgerError } from "../../domain/errors.js";
import { unitsToDecimal } from "../../domain/money.js";
import { conflict, hashOf, usageKey, type OpenResults, type Planned, type UsageItem, type UsageResult } from "./types.js";

/** A ledger key conflict on a usage transfer means another record took this external_id first. */
function usageError(err: LedgerError, externalId: string): LedgerError {
  return err.code === "idempotency_conflict" ? conflict(externalId) : err;
}

/**
 * The problems of the records the ledger refused, by their place in `planned`. A record refused by
 * its customer's balance limit is told what the limit is and how much of it is left: a prepaid
 * customer's available balance, or a postpaid customer's credit limit in the asset.
 */
export async function explainRefusals(
  db: Queryable,
  planned: Planned[],
  outcomes: BatchOutcome[],
  accounts: Map<string, string>,
): Promise<Map<number, LedgerError>> {
  const out = new Map<number, LedgerError>();
  const byLimit: { k: number; p: Planned; accountId: string | undefined }[] = [];
  planned.forEach((p, k) => {
    const o = outcomes[k];
    if (o?.kind !== "refused") return;
    out.set(k, usageError(o.error, p.item.input.externalId));
    if (o.error.code === "exceeds_credits" && !("accountId" in p.payer)) byLimit.push({ k, p, accountId: accounts.get(specKey(p.payer)) });
  });
  if (byLimit.length === 0) return out;
  const ids = byLimit.flatMap((x) => (x.accountId ? [x.accountId] : []));
  const rows = await getDebitHeadroom(db, ids);
  const found = new Map(rows.map((r) => [r.id, r]));
  for (const { k, p, accountId } of byLimit) {
    const row = accountId ? found.get(accountId) : undefined;
    const left = row ? BigInt(row.left) : 0n;
    const limit = row ? BigInt(row.od) : 0n;
    const { customerId, asset } = p.item.input;
    const d = (v: bigint) => unitsToDecimal(v < 0n ? 0n : v, p.scale);
    const cost = `the ${d(p.split.gross)} ${asset} this record costs`;
    const message =
      !("code" in p.payer) || p.payer.code === "customer_prepaid"
        ? `customer ${customerId}'s available ${asset} balance is ${d(left)}, less than ${cost}`
        : limit === 0n
          ? `customer ${customerId} has no credit limit in ${asset}: its postpaid usage in ${asset} is refused until one is approved (PUT /v1/customers/${customerId}/credit-limits/${asset})`
          : `customer ${customerId}'s credit limit in ${asset} is ${d(limit)}; ${d(left)} of it is left, less than ${cost}`;
    const code = !("code" in p.payer) || p.payer.code === "customer_prepaid" ? "exceeds_credits" : "credit_limit_exceeded";
    out.set(k, new LedgerError(code, message, [{ path: "customerId", message }]));
  }
  return out;
}

export function abortAll(results: OpenResults): UsageResult[] {
  return [...results].map((r) =>
    r?.status === "rejected"
      ? r
      : {
          status: "rejected" as const,
          error: new LedgerError("atomic_batch_aborted", "not written: another record of this atomic batch was rejected"),
        },
  );
}

/** Fills the results still open (records stored concurrently, in-batch repeats) from the database. */
export async function finish(db: Database, items: UsageItem[], results: OpenResults, firstInBatch: Map<string, number>): Promise<UsageResult[]> {
  const open = items.map((_, i) => i).filter((i) => results[i] === undefined);
  if (open.length === 0) return results as UsageResult[];
  const stored = await findUsageByExternalIds(
    db,
    open.map((i) => ({ marketplaceId: items[i]!.marketplaceId, externalId: items[i]!.input.externalId })),
  );
  for (const i of open) {
    const key = usageKey(items[i]!.marketplaceId, items[i]!.input.externalId);
    const first = results[firstInBatch.get(key)!];
    const record = stored.get(key);
    if (first?.status === "rejected" && firstInBatch.get(key) !== i) results[i] = first;
    else if (record && record.requestHash === hashOf(items[i]!)) results[i] = { status: "duplicate", record };
    else if (record) results[i] = { status: "rejected", error: conflict(items[i]!.input.externalId) };
    else
      results[i] = {
        status: "rejected",
        error: new LedgerError("usage_conflict", `usage record ${items[i]!.input.externalId} was written concurrently with different content`),
      };
  }
  return results as UsageResult[];
}
