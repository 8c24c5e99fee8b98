import { DrizzleQueryError } from "drizzle-orm";
import { drizzle, type PgRemoteDatabase } from "drizzle-orm/pg-proxy";
import type { Queryable } from "./client.js";
import * as schema from "./schema/index.js";

export type Orm = PgRemoteDatabase<typeof schema>;

const orms = new WeakMap<Queryable, Orm>();

/**
 * drizzle's query builder over a database handle or a transaction of this project (PostgreSQL or
 * PGlite alike): statements built from the schema in src/db/schema run through the same
 * connection, in the same transaction, as the hand-written ones. Ordinary reads and writes use it;
 * raw SQL stays where a benchmark showed it matters (the batch writer, the seal digest, reports),
 * said in a comment there.
 */
export function orm(db: Queryable): Orm {
  let o = orms.get(db);
  if (!o) {
    o = drizzle(
      async (text, params, method) => {
        if (method === "all") return { rows: await db.queryValues(text, params) };
        return { rows: await db.query(text, params) };
      },
      { schema },
    );
    orms.set(db, o);
  }
  return o;
}

/**
 * Runs a statement built with `orm()`. Always await builder statements through it: drizzle wraps
 * every driver error in a DrizzleQueryError that has no SQLSTATE `code` (the service tells a
 * database outage, 503, from a bug, 500, and retries deadlocks by that code) and whose message
 * carries the statement's parameters (which may hold a key's hash); the driver's own error is
 * rethrown instead.
 */
export async function run<T>(statement: PromiseLike<T>): Promise<T> {
  try {
    return await statement;
  } catch (err) {
    throw err instanceof DrizzleQueryError && err.cause !== undefined ? err.cause : err;
  }
}
