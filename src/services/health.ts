import type { Queryable } from "../db/client.js";
import { pingDatabase } from "../db/queries/health.js";

/** Whether the database answers a trivial query; when it does not, the error (for the log). */
export async function databaseReachable(db: Queryable): Promise<{ reachable: true } | { reachable: false; error: unknown }> {
  try {
    await pingDatabase(db);
    return { reachable: true };
  } catch (error) {
    return { reachable: false, error };
  }
}
