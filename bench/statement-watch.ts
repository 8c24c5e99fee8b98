/**
 * The longest statement the service ran during the benchmark, seen from PostgreSQL. Every 250 ms
 * it reads, from `pg_stat_activity`, the active statements of the service's connections
 * (`application_name` settlement-ledger; the benchmark's own fill and yardsticks are not counted)
 * and keeps the one that had run longest, with the scenario that was running. A statement that
 * runs for seconds while the scenario's figures collapse names the stall (docs/performance.md, "A
 * trigger's plan kept from its first call": a trigger's plan made a balance update run 13–28 s).
 * Only the statement the connection sent is seen: a trigger's statement shows as the one that
 * fired it.
 */
import postgres from "postgres";

export interface LongestStatement {
  ms: number;
  scenario: string;
  query: string;
}

export function watchStatements(dbUrl: string, intervalMs = 250) {
  const sql = postgres(dbUrl, { max: 1, onnotice: () => {} });
  let scenario = "seeding";
  let longest: LongestStatement = { ms: 0, scenario, query: "" };
  let running = true;
  const sample = async () => {
    const rows = await sql<{ ms: number; query: string }[]>`
      select (extract(epoch from clock_timestamp() - query_start) * 1000)::int as ms, left(regexp_replace(query, '\\s+', ' ', 'g'), 200) as query
        from pg_stat_activity
       where datname = current_database() and application_name = 'settlement-ledger' and state = 'active'
       order by query_start limit 1`;
    const r = rows[0];
    if (r && r.ms > longest.ms) longest = { ms: r.ms, scenario, query: r.query };
  };
  // Bounded by the benchmark: stop() ends the loop.
  const loop = (async () => {
    while (running) {
      await sample();
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  return {
    /** The scenario that starts now (named in the report). */
    scenario(name: string) {
      scenario = name;
    },
    async stop(): Promise<LongestStatement> {
      running = false;
      await loop;
      await sql.end();
      return longest;
    },
  };
}
