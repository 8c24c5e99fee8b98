import type { Database } from "../db/client.js";
import { GroupCommitter } from "../db/group-commit.js";
import { pgArray } from "../db/sql-arrays.js";

export interface AuditEntry {
  keyId: string | null;
  role: string | null;
  scopeId: string | null;
  method: string;
  path: string;
  route: string | null;
  status: number;
  requestId: string;
  idempotencyKey: string | null;
  bodySha256: string | null;
  bodyBytes: number | null;
}

/**
 * Appends audit rows, group-committed: concurrent calls share one insert and one commit, and each
 * caller waits for its own row to be durable.
 */
export function createAuditWriter(db: Database): GroupCommitter<AuditEntry, void> {
  return new GroupCommitter<AuditEntry, void>(async (items) => {
    const col = <T>(f: (e: AuditEntry) => T) => pgArray(items.map((e) => f(e) as never));
    await db.query(
      `insert into audit_log (key_id, role, scope_id, method, path, route, status, request_id, idempotency_key, body_sha256, body_bytes, at)
       select u.*, $12::timestamptz from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[], $9::text[], $10::text[], $11::int[]) u`,
      [col((e) => e.keyId), col((e) => e.role), col((e) => e.scopeId), col((e) => e.method), col((e) => e.path), col((e) => e.route), col((e) => e.status),
        col((e) => e.requestId), col((e) => e.idempotencyKey), col((e) => e.bodySha256), col((e) => e.bodyBytes), db.clock.now().toISOString()]);
    return items.map(() => undefined);
  }, { maxItems: 1000, maxConcurrent: db.kind === "pglite" ? 1 : 2, windowMs: 0 });
}
