import type { Database } from "../db/client.js";
import { GroupCommitter } from "../db/group-commit.js";

export { findStoredResponse, storeResponse, type IdempotencyKeyRef } from "../db/queries/http-idempotency.js";

/** A response to remember for its Idempotency-Key (see src/http/idempotency.ts). */
export interface StoredResponse {
  scope: string;
  key: string;
  method: string;
  path: string;
  hash: string;
  status: number;
  body: string;
}

const STATEMENT_BYTES = 64 * 1024 * 1024;

/**
 * Stores responses of requests whose write keeps its own idempotency in the ledger, group-committed
 * like the audit log: concurrent requests share one insert and one commit. A key already stored
 * (a concurrent retry stored it first) keeps its first response.
 */
export function createResponseWriter(db: Database, options: { statementBytes?: number } = {}): GroupCommitter<StoredResponse, void> {
  const statementBytes = options.statementBytes ?? STATEMENT_BYTES;
  return new GroupCommitter<StoredResponse, void>(async (items) => {
    // One jsonb parameter, with each response body (JSON text from JSON.stringify) spliced in as it
    // is: a batch's response runs to hundreds of kilobytes, and quoting it into an array literal cost
    // more than the rest of the insert. The body comes first, so that the fields after it win should
    // it ever repeat a key; statements stay well under jsonb's size limit (256 MB).
    const rows = items.map((e) => `{"b":${e.body ?? "null"},"s":${JSON.stringify(e.scope)},"k":${JSON.stringify(e.key)},` +
      `"m":${JSON.stringify(e.method)},"p":${JSON.stringify(e.path)},"h":${JSON.stringify(e.hash)},"st":${e.status}}`);
    for (let start = 0; start < rows.length;) {
      let end = start;
      for (let bytes = 0; end < rows.length && (end === start || bytes + rows[end]!.length < statementBytes); end++) bytes += rows[end]!.length;
      await db.query(
        `insert into http_idempotency (scope, key, method, path, request_hash, status, body)
         select s, k, m, p, h, st, b from jsonb_to_recordset($1::text::jsonb) as t(s text, k text, m text, p text, h text, st int, b jsonb)
         on conflict do nothing`,
        [`[${rows.slice(start, end).join(",")}]`]);
      start = end;
    }
    return items.map(() => undefined);
  }, { maxItems: 1000, maxConcurrent: db.kind === "pglite" ? 1 : 2, windowMs: 0 });
}
