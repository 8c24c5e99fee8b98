import type { Database } from "../db/client.js";
import { GroupCommitter } from "../db/group-commit.js";
import { insertAuditEntries, type AuditEntry } from "../db/queries/audit-log.js";

export type { AuditEntry } from "../db/queries/audit-log.js";

/**
 * Appends audit rows, group-committed: concurrent calls share one insert and one commit, and each
 * caller waits for its own row to be durable.
 */
export function createAuditWriter(db: Database): GroupCommitter<AuditEntry, void> {
  return new GroupCommitter<AuditEntry, void>(
    async (items) => {
      await insertAuditEntries(db, items, db.clock.now());
      return items.map(() => undefined);
    },
    { maxItems: 1000, maxConcurrent: db.kind === "pglite" ? 1 : 2, windowMs: 0 },
  );
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
  constructor(
    private readonly perMinute = 60,
    private readonly totalPerMinute = 600,
  ) {}

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
