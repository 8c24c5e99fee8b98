import type { Database } from "../db/client.js";
import { GroupCommitter } from "../db/group-commit.js";
import { pgArray } from "../db/sql-arrays.js";

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

/**
 * Stores responses of requests whose write keeps its own idempotency in the ledger, group-committed
 * like the audit log: concurrent requests share one insert and one commit. A key already stored
 * (a concurrent retry stored it first) keeps its first response.
 */
export function createResponseWriter(db: Database): GroupCommitter<StoredResponse, void> {
  return new GroupCommitter<StoredResponse, void>(async (items) => {
    const col = <T>(f: (e: StoredResponse) => T) => pgArray(items.map((e) => f(e) as never));
    await db.query(
      `insert into http_idempotency (scope, key, method, path, request_hash, status, body)
       select s, k, m, p, h, st, b::jsonb from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[]) as t(s, k, m, p, h, st, b)
       on conflict do nothing`,
      [col((e) => e.scope), col((e) => e.key), col((e) => e.method), col((e) => e.path), col((e) => e.hash), col((e) => e.status), col((e) => e.body)]);
    return items.map(() => undefined);
  }, { maxItems: 1000, maxConcurrent: db.kind === "pglite" ? 1 : 2, windowMs: 0 });
}
