import type { ReadChoice } from "../db/replica.js";
import type { Database, LedgerContext } from "./context.js";

export type { ReadChoice };

/** A read's value, where it was answered from, and how far behind the primary it may be. */
export interface SourcedRead<T> {
  value: T;
  source: ReadChoice["source"];
  stalenessMs: number;
}

/**
 * Runs a read (balances, statements, earnings, reports) on the database chosen for it: the replica
 * when one is configured and it holds `minPosition` (or, without one, lags within the bound),
 * else the primary. Any failure on the replica (gone away, recovery conflict, a row it does not
 * hold yet) runs the read again on the primary, whose answer (or error) is the one returned.
 * Decisions about money (payouts, limits, holds, ingest's checks, approvals) never come here.
 */
export interface ReadOptions {
  /**
   * The read is a few point lookups (balances): on the primary it runs on the read pool, where
   * PostgreSQL may keep a generic plan for it (src/db/client.ts, `reads`). Reports, statements and
   * exports (date ranges, optional filters, long scans, whose best plan depends on the values)
   * stay on the writers' pool, planned at each run, and do not hold the few read connections.
   */
  pointRead?: boolean;
}

export async function readChosen<T>(
  ctx: LedgerContext,
  minPosition: string | null | undefined,
  read: (db: Database) => Promise<T>,
  options: ReadOptions = {},
): Promise<SourcedRead<T>> {
  const choice = ctx.reads ? await ctx.reads.choose(minPosition) : undefined;
  if (choice?.source === "replica") {
    try {
      return { value: await read(choice.db), source: "replica", stalenessMs: choice.stalenessMs };
    } catch (err) {
      ctx.reads!.failed(err);
    }
  }
  return { value: await read(options.pointRead ? (ctx.db.reads ?? ctx.db) : ctx.db), source: "primary", stalenessMs: 0 };
}

/** The primary's WAL position after a write (the token for reading one's own writes), when a replica serves reads; null otherwise or when it cannot be read. */
export async function writePosition(ctx: LedgerContext): Promise<string | null> {
  if (!ctx.reads?.positionsOnWrites) return null;
  try {
    return await ctx.reads.position();
  } catch {
    return null;
  }
}
