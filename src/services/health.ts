import type { Queryable } from "../db/client.js";
import { pingDatabase } from "../db/queries/health.js";

/** How long a readiness check waits for the database before it says the database is unreachable. */
export const READINESS_WAIT_MS = 1_000;

/**
 * Whether the database answers a trivial query within `withinMs`; when it does not, the error (for
 * the log). The wait is bounded because a query can wait without failing: behind PgBouncer, while
 * PostgreSQL is down, the first client's query waits in the pooler's queue until the server is back
 * (up to its `query_wait_timeout`), and a readiness probe that hangs says nothing to the orchestrator.
 */
export async function databaseReachable(db: Queryable, withinMs = READINESS_WAIT_MS): Promise<{ reachable: true } | { reachable: false; error: unknown }> {
  let timer: NodeJS.Timeout | undefined;
  const ping = pingDatabase(db);
  // A late failure of the ping, after the bound answered, is of no interest to anyone.
  ping.catch(() => {});
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the database did not answer within ${withinMs} ms`)), withinMs);
  });
  try {
    await Promise.race([ping, late]);
    return { reachable: true };
  } catch (error) {
    return { reachable: false, error };
  } finally {
    clearTimeout(timer);
  }
}
