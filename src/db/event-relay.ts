import type { Database, Queryable } from "./client.js";
import { DERIVE_EVENTS, EVENT_TRANSFERS } from "./event-sources.js";
import { evaluateBalanceMonitors } from "./balance-monitor-eval.js";

/** Arbitrary constant: the advisory lock that lets one relay at a time append events. */
export const RELAY_LOCK = 7_420_003;
/**
 * About this many transfers turned into events per step at most, so that a backlog is relayed in
 * bounded steps (as the sealer does). Usage transfers do not count: a batch of them is one event.
 */
export const MAX_RELAY_TRANSFERS = 10_000;

export interface RelayStep {
  /** Source transactions covered: txid in [from, to). */
  from: bigint;
  to: bigint;
  /** Events appended (balance monitor events included), and the last position after the step. */
  appended: number;
  lastPosition: bigint;
  /** More is waiting: the step ended before the horizon to stay within its size. */
  cut: boolean;
}

/**
 * Appends the events of every database transaction that has finished since the last step
 * (docs/api.md, "Events"). Like the journal sealer, it reads only rows whose txid lies below its
 * snapshot's xmin: all of those transactions have committed or aborted, so nothing can later appear
 * in a range already relayed, and since only the relay appends (one at a time, under an advisory
 * lock), positions are strictly increasing in the order events become readable. The events of a
 * step are derived set-based (one INSERT … SELECT), then the balance monitors of the accounts the
 * step's transfers touched are evaluated (one more statement). Runs behind the writers: the ingest
 * path writes nothing for it. Returns undefined when another relay holds the lock or nothing
 * finished since the last step.
 */
export async function relayEvents(db: Database): Promise<RelayStep | undefined> {
  await summarizeUsageIndex(db);
  return db.transaction(async (tx) => {
    const [lock] = await tx.query<{ ok: boolean }>("select pg_try_advisory_xact_lock($1) as ok", [RELAY_LOCK]);
    if (!lock?.ok) return undefined;
    const [state] = await tx.query<{ watermark: string; last_position: string }>(
      "select watermark::text as watermark, last_position::text as last_position from event_relay where id = 1 for update",
    );
    const [{ horizon }] = (await tx.query<{ horizon: string }>("select pg_snapshot_xmin(pg_current_snapshot())::text as horizon")) as [{ horizon: string }];
    const from = BigInt(state?.watermark ?? "0");
    const horizonTxid = BigInt(horizon);
    if (horizonTxid <= from) return undefined;
    const to = await cutAt(tx, from, horizonTxid);
    // Every read of a step is a txid range on an index. Index paths are forced: with stale
    // statistics (a young table, autovacuum behind) the planner may take usage_records for small
    // and scan it whole, a cost that grows with the table at every step. No JIT: those same stale
    // estimates make the step's plan look expensive enough to compile, which took ~0.5 s of CPU
    // per step where the step itself takes ~10 ms (measured in the benchmark's database).
    await tx.query("select set_config('TimeZone', 'UTC', true), set_config('enable_seqscan', 'off', true), set_config('jit', 'off', true)");
    let last = BigInt(state?.last_position ?? "0");
    last += await appendDerived(tx, from, to, last);
    last += await evaluateBalanceMonitors(tx, last, db.clock.now());
    await tx.query(
      "insert into event_relay (id, watermark, last_position, updated_at) values (1, $1, $2, $3) on conflict (id) do update set watermark = excluded.watermark, last_position = excluded.last_position, updated_at = excluded.updated_at",
      [to.toString(), last.toString(), db.clock.now().toISOString()],
    );
    return { from, to, appended: Number(last - BigInt(state?.last_position ?? "0")), lastPosition: last, cut: to < horizonTxid };
  });
}

/**
 * Brings the BRIN index on usage_records.txid up to date (brin_summarize_new_values). Page ranges
 * not yet summarized are read whole by every range query; autovacuum summarizes them only when it
 * vacuums the table, so without this each step would reread the table's whole unsummarized tail.
 * The relay reads those pages anyway; it gives up at once when the table's lock is taken (by
 * autovacuum, which summarizes as it ends).
 */
async function summarizeUsageIndex(db: Database): Promise<void> {
  try {
    await db.transaction(async (tx) => {
      await tx.query("select set_config('lock_timeout', '50ms', true)");
      await tx.query("select brin_summarize_new_values('usage_records_txid_idx'::regclass)");
    });
  } catch (err) {
    // lock_not_available; insufficient_privilege (a database user that does not own the table:
    // the steps then read the unsummarized tail, slower but correct).
    if (!["55P03", "42501"].includes((err as { code?: string }).code ?? "")) throw err;
  }
}

/**
 * Where the step ends: the horizon, or earlier at the transaction holding the transfer past
 * MAX_RELAY_TRANSFERS (never splitting one database transaction: one that alone holds more is
 * relayed whole).
 */
async function cutAt(tx: Queryable, from: bigint, horizon: bigint): Promise<bigint> {
  const [cut] = await tx.query<{ txid: string }>(
    `select txid::text as txid from transfers where txid >= $1 and txid < $2 and ${EVENT_TRANSFERS} order by txid offset $3 limit 1`,
    [from.toString(), horizon.toString(), MAX_RELAY_TRANSFERS],
  );
  if (!cut) return horizon;
  const [next] = await tx.query<{ txid: string | null }>(`select min(txid)::text as txid from transfers where txid > $1 and txid < $2 and ${EVENT_TRANSFERS}`, [
    cut.txid,
    horizon.toString(),
  ]);
  const [first] = await tx.query<{ txid: string }>(`select min(txid)::text as txid from transfers where txid >= $1 and ${EVENT_TRANSFERS}`, [from.toString()]);
  // End before the cut transaction, unless it is the first: then just after it.
  if (BigInt(cut.txid) > BigInt(first!.txid)) return BigInt(cut.txid);
  return next?.txid ? BigInt(next.txid) : horizon;
}

async function appendDerived(tx: Queryable, from: bigint, to: bigint, last: bigint): Promise<bigint> {
  const [row] = await tx.query<{ n: string }>(
    `with derived (txid, rank, ord, type, marketplace_id, operator_id, resource_type, resource_id, data, occurred_at) as (
       ${DERIVE_EVENTS}
     ),
     appended as (
       insert into events (position, id, type, marketplace_id, operator_id, resource_type, resource_id, data, occurred_at)
       select $3::bigint + row_number() over (order by d.txid, d.rank, d.ord, d.resource_id),
              'evt_' || gen_random_uuid(), d.type, d.marketplace_id, d.operator_id, d.resource_type, d.resource_id, d.data, d.occurred_at
         from derived d
       returning 1)
     select count(*)::text as n from appended`,
    [from.toString(), to.toString(), last.toString()],
  );
  return BigInt(row?.n ?? "0");
}

/**
 * Relays until every database transaction that had finished when it was called is covered, and
 * returns how many events it appended. A step ends at the oldest transaction still running on the
 * server (whichever database it is in), so it may have to wait for one: it polls every 20 ms, up to
 * `timeoutMs`. For tests and tools; the worker calls relayEvents on its own schedule.
 */
export async function relayAllEvents(db: Database, timeoutMs = 10_000): Promise<number> {
  const [{ target }] = (await db.query<{ target: string }>("select pg_snapshot_xmax(pg_current_snapshot())::text as target")) as [{ target: string }];
  let appended = 0;
  for (const started = Date.now(); ;) {
    const step = await relayEvents(db);
    if (step) appended += step.appended;
    if ((step?.to ?? (await relayWatermark(db))) >= BigInt(target)) return appended;
    if (Date.now() - started > timeoutMs) throw new Error(`event relay did not reach txid ${target} within ${timeoutMs} ms`);
    if (!step) await new Promise((r) => setTimeout(r, 20));
  }
}

export async function relayWatermark(db: Queryable): Promise<bigint> {
  const [row] = await db.query<{ w: string }>("select watermark::text as w from event_relay where id = 1");
  return BigInt(row?.w ?? "0");
}
