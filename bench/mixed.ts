/**
 * Batch and single ingest at once, as a marketplace that posts its hourly batches while its live
 * traffic posts records one by one: 2 clients posting 1,000-record batches and 32 connections
 * posting one record each, for the same seconds. Reported under the `mixed_` keys of
 * bench/results/latest.json (docs/performance.md).
 */
import { percentile, timed, type Client } from "./load.js";

export async function mixedIngest(api: Client, marketKey: string, record: () => unknown, seconds: number) {
  const [batch, single] = await Promise.all([
    timed(2, seconds * 1000, async () => {
      const r = await api.call("POST", "/v1/usage/batch", { records: Array.from({ length: 1000 }, record) }, marketKey);
      if (r.status !== 200) throw new Error(`mixed batch: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
      return r.body.summary.accepted as number;
    }),
    timed(32, seconds * 1000, async () => {
      const r = await api.call("POST", "/v1/usage", record(), marketKey);
      if (r.status !== 201) throw new Error(`mixed single: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
      return 1;
    }),
  ]);
  return {
    mixed_batch_records_per_s: Math.round(batch.units / batch.seconds),
    mixed_batch_p99_ms: Math.round(percentile(batch.latencies, 99)),
    mixed_single_records_per_s: Math.round(single.units / single.seconds),
    mixed_single_p50_ms: +percentile(single.latencies, 50).toFixed(1),
    mixed_single_p99_ms: +percentile(single.latencies, 99).toFixed(1),
  };
}
