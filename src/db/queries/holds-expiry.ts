import type { Queryable } from "../client.js";

/** Pending transfers (holds) whose timeout is at or before `now` and that nothing resolved yet, oldest timeout first. */
export async function listExpiredHolds(db: Queryable, limit: number, now: Date): Promise<Array<{ id: string }>> {
  return db.query<{ id: string }>(
    `select t.id from transfers t
      where t.kind = 'pending' and t.timeout_at <= $2::timestamptz
        and not exists (select 1 from transfers r where r.pending_id = t.id)
      order by t.timeout_at
      limit $1`,
    [limit, now.toISOString()],
  );
}
