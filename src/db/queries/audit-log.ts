import type { Queryable } from "../client.js";
import { pgArray } from "../sql-arrays.js";

/** One audited request (see src/services/audit-log.ts). */
export interface AuditEntry {
  keyId: string | null;
  role: string | null;
  scopeId: string | null;
  method: string;
  path: string;
  route: string | null;
  status: number;
  requestId: string;
  clientRequestId: string | null;
  idempotencyKey: string | null;
  bodySha256: string | null;
  bodyBytes: number | null;
}

/** Appends audit rows, all recorded at `at`, with one statement. */
export async function insertAuditEntries(db: Queryable, items: readonly AuditEntry[], at: Date): Promise<void> {
  const col = <T>(f: (e: AuditEntry) => T) => pgArray(items.map((e) => f(e) as never));
  await db.query(
    `insert into audit_log (key_id, role, scope_id, method, path, route, status, request_id, idempotency_key, body_sha256, body_bytes, client_request_id, at)
       select u.*, $13::timestamptz from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[], $9::text[], $10::text[], $11::int[], $12::text[]) u`,
    [col((e) => e.keyId), col((e) => e.role), col((e) => e.scopeId), col((e) => e.method), col((e) => e.path), col((e) => e.route), col((e) => e.status),
      col((e) => e.requestId), col((e) => e.idempotencyKey), col((e) => e.bodySha256), col((e) => e.bodyBytes), col((e) => e.clientRequestId), at.toISOString()]);
}
