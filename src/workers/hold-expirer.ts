import type { Database } from "../db/client.js";
import { listExpiredHolds } from "../db/queries/holds-expiry.js";
import { writeTransfers } from "../db/transfer-writer.js";

/**
 * Releases holds whose timeout has passed by recording an expire_pending transfer for each.
 * The idempotency key is derived from the hold, so several expirers running at once record one
 * expiry per hold. Returns how many holds were expired.
 */
export async function expireHolds(db: Database, limit = 1000): Promise<number> {
  const due = await listExpiredHolds(db, limit, db.clock.now());
  if (due.length === 0) return 0;
  const results = await writeTransfers(
    db,
    due.map((t) => ({ kind: "expire_pending" as const, idempotencyKey: `expire:${t.id}`, pendingId: t.id })),
  );
  return results.filter((r) => r.ok && !r.replayed).length;
}
