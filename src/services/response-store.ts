import type { Database } from "../db/client.js";
import { GroupCommitter } from "../db/group-commit.js";
import type { Queryable } from "../db/client.js";
import { insertAuditEntries, type AuditEntry } from "../db/queries/audit-log.js";
import { encodeStoredResponse, storeEncodedResponses, storeResponse, type IdempotencyKeyRef, type StoredResponse } from "../db/queries/http-idempotency.js";

export { findStoredResponse, type IdempotencyKeyRef, type StoredResponse } from "../db/queries/http-idempotency.js";
export { holdKeys } from "../db/queries/key-guard.js";
export type { WriteReceipt } from "../db/queries/write-receipts.js";

/**
 * In the change's transaction: remembers its answer for the key and writes its audit row. Returns
 * false (writing nothing) when a concurrent request with the key stored its answer first.
 */
export async function rememberWrite(tx: Queryable, req: IdempotencyKeyRef, status: number, body: unknown, audit: AuditEntry, at: Date): Promise<boolean> {
  if (!(await storeResponse(tx, req, status, body))) return false;
  await insertAuditEntries(tx, [audit], at);
  return true;
}

/** In the change's transaction: writes its audit row. */
export async function recordAudit(tx: Queryable, audit: AuditEntry, at: Date): Promise<void> {
  await insertAuditEntries(tx, [audit], at);
}

const STATEMENT_BYTES = 64 * 1024 * 1024;

/**
 * Stores responses of requests whose write keeps its own idempotency in the ledger, group-committed
 * like the audit log: concurrent requests share one insert and one commit. A key already stored
 * (a concurrent retry stored it first) keeps its first response.
 */
export function createResponseWriter(db: Database, options: { statementBytes?: number } = {}): GroupCommitter<StoredResponse, void> {
  const statementBytes = options.statementBytes ?? STATEMENT_BYTES;
  return new GroupCommitter<StoredResponse, void>(
    async (items) => {
      // One jsonb parameter per statement, with each response body spliced in as it is (see
      // encodeStoredResponse); statements stay well under jsonb's size limit (256 MB).
      const rows = items.map(encodeStoredResponse);
      for (let start = 0; start < rows.length;) {
        let end = start;
        for (let bytes = 0; end < rows.length && (end === start || bytes + rows[end]!.length < statementBytes); end++) bytes += rows[end]!.length;
        await storeEncodedResponses(db, rows.slice(start, end));
        start = end;
      }
      return items.map(() => undefined);
    },
    { maxItems: 1000, maxConcurrent: db.kind === "pglite" ? 1 : 2, windowMs: 0 },
  );
}
