import type { Database, Queryable } from "../db/client.js";

/**
 * Runs fn in a transaction: a new one when given the database, or the caller's when given a
 * transaction already (so a use case can run inside a larger one, e.g. with its idempotency record).
 */
export function inTransaction<T>(db: Database | Queryable, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  return "transaction" in db ? db.transaction(fn) : fn(db);
}
