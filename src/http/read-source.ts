import type { Context } from "hono";
import { readChosen, writePosition, type ReadOptions, type SourcedRead } from "../services/read-source.js";
import type { Database } from "../services/context.js";
import type { AppEnv } from "./request-context.js";

/** Request header: the `Ledger-Position` a write answered; the read then sees that write (docs/scaling.md, "Read replica"). */
export const MIN_POSITION_HEADER = "Ledger-Min-Position";

/**
 * Runs a read model (balances, statements, earnings, reports) on the database chosen for this
 * request, and says in the answer where it came from (`Ledger-Read-Source: replica|primary`) and
 * how many milliseconds of the primary's commits it may miss (`Ledger-Staleness-Ms`, 0 on the primary).
 * Access checks stay before it, on the primary.
 */
export async function readModel<T>(c: Context<AppEnv>, read: (db: Database) => Promise<T>, options: ReadOptions = {}): Promise<T> {
  return sourced(c, await readChosen(c.get("deps").ledger, c.req.header(MIN_POSITION_HEADER), read, options));
}

/**
 * readModel started together with the access check before it, when the check needs nothing from
 * the read: the read's statements go out while the check's run (one round trip less for the
 * caller). Nothing of the read reaches the answer, not even its headers, unless the check passes;
 * when it fails, its error is the answer and what was read is dropped.
 */
export async function readModelAfter<T>(
  c: Context<AppEnv>,
  check: () => Promise<void>,
  read: (db: Database) => Promise<T>,
  options: ReadOptions = {},
): Promise<T> {
  const reading = readChosen(c.get("deps").ledger, c.req.header(MIN_POSITION_HEADER), read, options);
  // Awaited below once the check has passed; until then a failure of the read must not go unhandled.
  reading.catch(() => {});
  await check();
  return sourced(c, await reading);
}

function sourced<T>(c: Context<AppEnv>, r: SourcedRead<T>): T {
  c.header("Ledger-Read-Source", r.source);
  c.header("Ledger-Staleness-Ms", String(r.stalenessMs));
  return r.value;
}

/**
 * After a successful write (any method but GET, HEAD and OPTIONS answered 2xx), when a replica
 * serves reads: `Ledger-Position`, the primary's WAL position once the write has committed.
 */
export async function ledgerPosition(c: Context<AppEnv>, next: () => Promise<void>): Promise<void> {
  await next();
  if (c.req.method === "GET" || c.req.method === "HEAD" || c.req.method === "OPTIONS") return;
  if (c.res.status < 200 || c.res.status >= 300) return;
  const position = await writePosition(c.get("deps").ledger);
  if (position !== null) c.header("Ledger-Position", position);
}
