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
  clientRequestId: string | null;
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
      `insert into audit_log (key_id, role, scope_id, method, path, route, status, request_id, idempotency_key, body_sha256, body_bytes, client_request_id, at)
       select u.*, $13::timestamptz from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[], $9::text[], $10::text[], $11::int[], $12::text[]) u`,
      [col((e) => e.keyId), col((e) => e.role), col((e) => e.scopeId), col((e) => e.method), col((e) => e.path), col((e) => e.route), col((e) => e.status),
        col((e) => e.requestId), col((e) => e.idempotencyKey), col((e) => e.bodySha256), col((e) => e.bodyBytes), col((e) => e.clientRequestId), db.clock.now().toISOString()]);
    return items.map(() => undefined);
  }, { maxItems: 1000, maxConcurrent: db.kind === "pglite" ? 1 : 2, windowMs: 0 });
}

/**
 * How many refused requests (401, 403, 413, 429) are audited: at most `perMinute` rows a minute for
 * each source (the key, or "anonymous"), and `totalPerMinute` in all, so that a flood of refused
 * requests cannot fill the disk; what is left out is counted (the metric
 * audit_refused_dropped_total). Calls that a key is allowed to make are always audited.
 */
export class RefusedAuditBudget {
  private window = -1;
  private counts = new Map<string, number>();
  private total = 0;
  constructor(private readonly perMinute = 60, private readonly totalPerMinute = 600) {}

  take(source: string, nowMs: number): boolean {
    const window = Math.floor(nowMs / 60_000);
    if (window !== this.window) {
      this.window = window;
      this.counts.clear();
      this.total = 0;
    }
    const n = this.counts.get(source) ?? 0;
    if (n >= this.perMinute || this.total >= this.totalPerMinute) return false;
    this.counts.set(source, n + 1);
    this.total++;
    return true;
  }
}
