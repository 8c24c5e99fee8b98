import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { Queryable } from "../services/context.js";

/**
 * Prometheus metrics of one process, served at /metrics. With the database, also the payouts that
 * wait because the vault is short (read at each scrape; the exact shortfall is in GET /v1/treasury).
 */
export function createMetrics(db?: Queryable) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  if (db) {
    countGauge(
      registry,
      db,
      "payouts_waiting_for_funds",
      "Pending payouts the vault cannot pay yet, by chain and asset: fund the vault (GET /v1/treasury gives the shortfall)",
      ["chain_id", "asset"],
      `select p.chain_id::text as chain_id, s.code as asset, count(*)::text as n from payouts p join assets s on s.id = p.asset_id
        where p.status = 'pending' and p.note like 'waiting for funds%' group by 1, 2`,
    );
    countGauge(
      registry,
      db,
      "chain_transactions_stuck",
      "Payout transactions signed or submitted whose last step failed (e.g. paid on chain but not yet settled in the ledger), by chain and status: the worker retries them; a value that stays above 0 needs a look",
      ["chain_id", "status"],
      `select chain_id::text as chain_id, status, count(*)::text as n from chain_transactions
        where status in ('signed', 'submitted') and last_error is not null group by 1, 2`,
    );
  }
  return {
    registry,
    auditRefusedDropped: new Counter({
      name: "audit_refused_dropped_total",
      help: "Refused requests (401, 403, 413, 429) left out of the audit log because their source passed its budget of rows a minute",
      registers: [registry],
    }),
    httpRequests: new Counter({
      name: "http_requests_total",
      help: "HTTP requests by method, route and status",
      labelNames: ["method", "route", "status"] as const,
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: "http_request_duration_seconds",
      help: "HTTP request duration by method and route",
      labelNames: ["method", "route"] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    transfersWritten: new Counter({
      name: "ledger_transfer_requests_total",
      help: "Transfer requests handled by the ledger, by outcome",
      labelNames: ["outcome"] as const,
      registers: [registry],
    }),
  };
}
export type Metrics = ReturnType<typeof createMetrics>;

/** A gauge of row counts read from the database at each scrape: `sql` returns the labels and `n`. */
function countGauge(registry: Registry, db: Queryable, name: string, help: string, labelNames: string[], sql: string): void {
  new Gauge({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      this.reset();
      for (const r of await db.query<Record<string, string>>(sql)) {
        this.set(Object.fromEntries(labelNames.map((l) => [l, r[l]!])), Number(r.n));
      }
    },
  });
}
