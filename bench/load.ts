/**
 * HTTP load primitives for the benchmark: Node's fetch (keep-alive, no limit on connections per
 * origin), timed loops, percentiles.
 */

export interface Client {
  base: string;
  key: string;
  call(method: string, path: string, body?: unknown, key?: string): Promise<{ status: number; body: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

let seq = 0;
export function client(base: string, key: string): Client {
  return {
    base, key,
    async call(method, path, body, k = key) {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${k}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...(method === "POST" ? { "idempotency-key": `bench-${process.pid}-${++seq}-${Date.now()}` } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try { parsed = JSON.parse(text); } catch { /* not JSON */ }
      return { status: res.status, body: parsed };
    },
  };
}

/** Runs `concurrency` loops of `op` until `ms` have passed; returns each op's latency (ms) and its count of units. */
export async function timed(concurrency: number, ms: number, op: (worker: number) => Promise<number>): Promise<{ latencies: number[]; units: number; seconds: number }> {
  const latencies: number[] = [];
  let units = 0;
  const start = performance.now();
  const until = start + ms;
  await Promise.all(Array.from({ length: concurrency }, async (_, w) => {
    while (performance.now() < until) {
      const t = performance.now();
      // Not `units += await op(w)`: that reads `units` before the await and loses the other loops' counts.
      const n = await op(w);
      units += n;
      latencies.push(performance.now() - t);
    }
  }));
  return { latencies, units, seconds: (performance.now() - start) / 1000 };
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Runs `items` through `op` with at most `concurrency` at once. */
export async function pool<T>(items: T[], concurrency: number, op: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < items.length) await op(items[next++]!);
  }));
}
