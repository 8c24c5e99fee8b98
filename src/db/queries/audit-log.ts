import { and, asc, eq, gt, gte, lt, sql } from "drizzle-orm";
import type { Queryable } from "../client.js";
import { orm, run } from "../orm.js";
import { auditLog } from "../schema/index.js";
import { pgColumns } from "../sql-arrays.js";

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
  await db.query(
    `insert into audit_log (key_id, role, scope_id, method, path, route, status, request_id, idempotency_key, body_sha256, body_bytes, client_request_id, at)
       select u.*, $13::timestamptz from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[], $9::text[], $10::text[], $11::int[], $12::text[]) u`,
    [
      ...(await pgColumns(items, [
        (e) => e.keyId,
        (e) => e.role,
        (e) => e.scopeId,
        (e) => e.method,
        (e) => e.path,
        (e) => e.route,
        (e) => e.status,
        (e) => e.requestId,
        (e) => e.idempotencyKey,
        (e) => e.bodySha256,
        (e) => e.bodyBytes,
        (e) => e.clientRequestId,
      ])),
      at.toISOString(),
    ],
  );
}

/** A page of the audit log, oldest first, after the cursor (an audit row id). */
export async function listAuditLog(db: Queryable, q: { keyId?: string; from?: Date; to?: Date; after?: string; limit: number }) {
  const rows = await run(
    orm(db)
      .select({
        id: sql<string>`${auditLog.id}::text`,
        at: auditLog.at,
        key_id: auditLog.keyId,
        role: auditLog.role,
        scope_id: auditLog.scopeId,
        method: auditLog.method,
        path: auditLog.path,
        route: auditLog.route,
        status: auditLog.status,
        request_id: auditLog.requestId,
        client_request_id: auditLog.clientRequestId,
        idempotency_key: auditLog.idempotencyKey,
        body_sha256: auditLog.bodySha256,
        body_bytes: auditLog.bodyBytes,
      })
      .from(auditLog)
      .where(
        and(
          q.keyId === undefined ? undefined : eq(auditLog.keyId, q.keyId),
          q.from === undefined ? undefined : gte(auditLog.at, q.from),
          q.to === undefined ? undefined : lt(auditLog.at, q.to),
          q.after === undefined ? undefined : gt(auditLog.id, BigInt(q.after)),
        ),
      )
      .orderBy(asc(auditLog.id))
      .limit(q.limit),
  );
  return rows.map((r) => ({ ...r, at: new Date(r.at) }));
}
