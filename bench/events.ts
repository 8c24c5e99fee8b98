/**
 * The event log's cost to ingest (docs/performance.md, "Events"): batch ingest with the service's
 * event relay held off (the bench holds its advisory lock, so the relay's ticks find it taken and do
 * nothing), then with it running and one client following GET /v1/events from its last position,
 * then held off again, in the same run. Reports records/s of each, the relay's lag once ingest
 * stops, and how many events the phase appended.
 */
import type postgres from "postgres";
import { RELAY_LOCK } from "../src/db/event-relay.js";
import type { Client } from "./load.js";

type Sql = postgres.Sql;
type Phase = { units: number; seconds: number };

/** Holds the relay off (a session-level advisory lock on a connection of its own) until released. */
export async function holdRelay(sql: Sql): Promise<() => Promise<void>> {
  const conn = await sql.reserve();
  await conn`select pg_advisory_lock(${RELAY_LOCK})`;
  return async () => {
    await conn`select pg_advisory_unlock(${RELAY_LOCK})`;
    conn.release();
  };
}

/**
 * Skips the events of synthetic history (the benchmark's 10-million-entry fill, written straight
 * into the journal): moves the relay's watermark past every transaction finished so far. Call it
 * while holding the relay off.
 */
export async function skipRelayBacklog(sql: Sql): Promise<void> {
  await sql`update event_relay set watermark = greatest(watermark, pg_snapshot_xmin(pg_current_snapshot())::text::bigint) where id = 1`;
}

async function relayState(sql: Sql): Promise<{ watermark: bigint; last: bigint }> {
  const [row] = await sql`select watermark::text as w, last_position::text as p from event_relay where id = 1`;
  return { watermark: BigInt(row!.w as string), last: BigInt(row!.p as string) };
}

/** Follows the event log by cursor, as a subscriber would, until stopped; returns how many events it read. */
function follow(api: Client, key: string, from: bigint): { stop: () => Promise<number> } {
  let running = true;
  let read = 0;
  const loop = (async () => {
    let cursor = from.toString();
    while (running) {
      const r = await api.call("GET", `/v1/events?limit=1000&cursor=${cursor}`, undefined, key);
      if (r.status !== 200) throw new Error(`events: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
      read += r.body.data.length;
      if (r.body.data.length > 0) cursor = r.body.data.at(-1).position;
      else await new Promise((res) => setTimeout(res, 100));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return read;
    },
  };
}

export async function eventRelayComparison(sql: Sql, api: Client, financeKey: string, ingest: () => Promise<Phase>) {
  const rate = (p: Phase) => p.units / p.seconds;
  let release = await holdRelay(sql);
  const off1 = await ingest();
  await release();
  const before = await relayState(sql);
  const follower = follow(api, financeKey, before.last);
  const on = await ingest();
  // Lag: how long after ingest stops the relay covers every transaction finished by then.
  const [{ target }] = (await sql`select pg_snapshot_xmax(pg_current_snapshot())::text as target`) as unknown as [{ target: string }];
  const stopped = performance.now();
  let after = await relayState(sql);
  for (; after.watermark < BigInt(target) && performance.now() - stopped < 120_000; after = await relayState(sql)) await new Promise((r) => setTimeout(r, 25));
  const lagMs = performance.now() - stopped;
  const read = await follower.stop();
  release = await holdRelay(sql);
  const off2 = await ingest();
  await release();
  const offRate = (rate(off1) + rate(off2)) / 2;
  return {
    ingest_batch_records_per_s_events_off: Math.round(offRate),
    ingest_batch_records_per_s_events_on: Math.round(rate(on)),
    events_on_vs_off: +(rate(on) / offRate).toFixed(2),
    // How far apart the two phases without the relay are: the noise the ratio above sits in.
    events_off_phases_spread: +(Math.abs(rate(off1) - rate(off2)) / offRate).toFixed(2),
    events_relay_lag_ms: Math.round(lagMs),
    events_appended_in_phase: Number(after.last - before.last),
    events_read_by_follower: read,
  };
}
