import type { Queryable } from "../client.js";
import { inOrder } from "../in-order.js";
import { insertAuditEntries, type AuditEntry } from "./audit-log.js";
import { encodeStoredResponse, storeEncodedResponses, type IdempotencyKeyRef } from "./http-idempotency.js";
import { holdKeys } from "./key-guard.js";

/**
 * What a write request leaves beside its change, in the change's own database transaction: its
 * audit row, and its answer remembered for its Idempotency-Key when the answer is made from what
 * the transaction decided. A request that changes nothing (a refusal, a replay) has no receipt
 * written this way: the HTTP layer audits it on its own (src/http/middleware/audit.ts).
 */
export interface WriteReceipt<R = unknown> {
  /** The audit row; `status` is the answer's status when the change commits. */
  audit: AuditEntry;
  /** The answer to remember for the request's key, made from the change's result. */
  answer?: { request: IdempotencyKeyRef; body: (result: R) => unknown };
}

/** A receipt and the result of the change it belongs to. */
export interface Receipted<R> {
  receipt: WriteReceipt<R>;
  result: R;
}

/**
 * Writes the receipts of the changes a transaction made: one statement for the audit rows and one
 * for the answers (a key already stored keeps its first answer). The keys the changes were made
 * with are held against revocation until the transaction ends, and a key revoked meanwhile refuses
 * the whole transaction (src/db/queries/key-guard.ts; a group commit then runs its items again one
 * by one, so only that key's are refused).
 */
export async function writeReceipts<R>(tx: Queryable, done: readonly Receipted<R>[], at: Date): Promise<void> {
  if (done.length === 0) return;
  const answers = done.flatMap(({ receipt, result }) =>
    receipt.answer
      ? [encodeStoredResponse({ ...receipt.answer.request, status: receipt.audit.status, body: JSON.stringify(receipt.answer.body(result)) })]
      : [],
  );
  // Sent together (src/db/in-order.ts): neither needs the other.
  await inOrder(tx, [
    () =>
      holdKeys(
        tx,
        done.map((d) => d.receipt.audit.keyId),
      ),
    () =>
      insertAuditEntries(
        tx,
        done.map((d) => d.receipt.audit),
        at,
      ),
    () => (answers.length > 0 ? storeEncodedResponses(tx, answers) : Promise.resolve()),
  ]);
}
