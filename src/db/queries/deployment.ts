import { randomUUID } from "node:crypto";
import type { Queryable } from "../client.js";

const cached = new WeakMap<object, Promise<string>>();

/** This ledger's deployment id (made on first use; one per database). */
export function deploymentId(db: Queryable): Promise<string> {
  let id = cached.get(db);
  if (!id) {
    id = (async () => {
      await db.query("insert into deployment (singleton, id) values (true, $1) on conflict do nothing", [randomUUID()]);
      const [row] = await db.query<{ id: string }>("select id from deployment");
      return row!.id;
    })();
    id.catch(() => cached.delete(db));
    cached.set(db, id);
  }
  return id;
}
