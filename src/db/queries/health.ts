import type { Queryable } from "../client.js";

/** The cheapest round trip to the database: resolves when it answers, throws when it does not. */
export async function pingDatabase(db: Queryable): Promise<void> {
  await db.query("select 1");
}
