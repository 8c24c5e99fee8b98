/**
 * HTTP load primitives for the benchmark: node:http with a keep-alive agent (no limit on
 * connections), timed loops, percentiles. Not fetch: the load generator shares the machine with
 * the service and PostgreSQL, and fetch spent ~560 µs of CPU per request where node:http spends a
 * fraction of it, CPU the service under test then did not get.
 */
import { Agent, request } from "node:http";

export interface Client {
  base: string;
  key: string;
  call(method: string, path: string, body?: unknown, key?: string): Promise<{ status: number; body: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

const agent = new Agent({ keepAlive: true, maxSockets: Infinity });

let seq = 0;
export function client(base: string, key: string): Client {
  const url = new URL(base);
  return {
    base,
    key,
    call(method, path, body, k = key) {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const headers: Record<string, string | number> = { authorization: `Bearer ${k}` };
      if (payload !== undefined) {
        headers["content-type"] = "application/json";
        headers["content-length"] = Buffer.byteLength(payload);
      }
      if (method === "POST") headers["idempotency-key"] = `bench-${process.pid}-${++seq}-${Date.now()}`;
      return new Promise((resolve, reject) => {
        const req = request({ agent, host: url.hostname, port: url.port, method, path, headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let parsed: unknown = text;
            try {
              parsed = JSON.parse(text);
            } catch {
              /* not JSON */
            }
            resolve({ status: res.statusCode ?? 0, body: parsed });
          });
          res.on("error", reject);
        });
        req.on("error", reject);
        req.end(payload);
      });
    },
  };
}

/** Runs `concurrency` loops of `op` until `ms` have passed; returns each op's latency (ms) and its count of units. */
export async function timed(
  concurrency: number,
  ms: number,
  op: (worker: number) => Promise<number>,
): Promise<{ latencies: number[]; units: number; seconds: number }> {
  const latencies: number[] = [];
  let units = 0;
  const start = performance.now();
  const until = start + ms;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      while (performance.now() < until) {
        const t = performance.now();
        // Not `units += await op(w)`: that reads `units` before the await and loses the other loops' counts.
        const n = await op(w);
        units += n;
        latencies.push(performance.now() - t);
      }
    }),
  );
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
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await op(items[next++]!);
    }),
  );
}

/**
 * Usage records as the benchmarks send them: one H100 job of 1 to 59 minutes for a random operator
 * and customer, whose period ends a minute before the service's clock (`GET /healthz` tells its
 * time), each with an external id of its own.
 */
export async function usageRecords(base: string, operators: number, customers: number): Promise<() => Record<string, string>> {
  const serviceNow = Date.parse(((await (await fetch(`${base}/healthz`)).json()) as { time: string }).time);
  const start = new Date(serviceNow - 3_600_000).toISOString();
  const end = new Date(serviceNow - 60_000).toISOString();
  let ext = 0;
  return () => ({
    external_id: `u-${++ext}`,
    operator_id: `op-${Math.floor(Math.random() * operators)}`,
    customer_id: `c-${Math.floor(Math.random() * customers)}`,
    resource: "gpu:h100",
    unit: "gpu_second",
    quantity: String(60 + Math.floor(Math.random() * 3540)),
    unit_price: "0.000694",
    asset: "TUSD",
    period_start: start,
    period_end: end,
  });
}

/**
 * The marketplace hands over the deposits it claimed for its customers: finance records the
 * receipt and a second finance key approves it, so that its usage is funded (a balance read then
 * judges it from one row; docs/performance.md, "Reads planned once"). Answers the first finance key.
 */
export async function handOverDeposits(api: Client, marketplaceId: string, asset: string, amount: bigint): Promise<string> {
  const ok = async (p: ReturnType<Client["call"]>, what: string) => {
    const r = await p;
    if (r.status >= 300) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body as { id: string; secret: string };
  };
  const finance = (await ok(api.call("POST", "/v1/api-keys", { name: `${marketplaceId} finance`, role: "finance" }), "finance key")).secret;
  const receipt = await ok(
    api.call("POST", `/v1/marketplaces/${marketplaceId}/receipts`, { asset, amount: amount.toString(), reference: `${marketplaceId} settlement` }, finance),
    "receipt",
  );
  const controller = (await ok(api.call("POST", "/v1/api-keys", { name: `${marketplaceId} controller`, role: "finance" }), "controller key")).secret;
  await ok(api.call("POST", `/v1/proposals/${receipt.id}/approve`, {}, controller), "approve receipt");
  return finance;
}
