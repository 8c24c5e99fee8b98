/**
 * What the chaos scenarios share: the service's processes (API, worker) started and killed, a
 * client that retries each request with its Idempotency-Key until it gets a definitive answer and
 * counts what it saw on the way, the seed of a marketplace over HTTP, and the checks run after
 * every scenario.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { buildService, compiledEntryArgs } from "../scripts/compiled-service.js";

/**
 * The service's processes run compiled (scripts/compiled-service.ts), compiled at the first start:
 * a restart then costs about half the CPU of one through tsx, on a machine the scenarios keep busy.
 */
let compiled: string | undefined;
const compiledService = (): string => (compiled ??= buildService());

export const root = join(import.meta.dirname, "..");
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const between = (lo: number, hi: number) => lo + Math.floor(Math.random() * (hi - lo + 1));

/** Every service process started, to kill them all if the run is interrupted. */
export const running = new Set<ChildProcess>();

/**
 * `--pgbouncer`: the service's processes (API, workers, npm run verify) reach the database through a
 * PgBouncer in transaction mode; the checks read the server directly.
 */
export const databasePath: { via?: (url: string) => string } = {};

/** DATABASE_URL (and DATABASE_POOLER) as the service's processes get them. */
export function serviceDatabaseEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (!databasePath.via || !env.DATABASE_URL) return env;
  return { ...env, DATABASE_URL: databasePath.via(env.DATABASE_URL), DATABASE_POOLER: "transaction" };
}

/** A service process (`npm start` or `npm run worker`) that can be killed and started again. */
export class Service {
  child: ChildProcess | undefined;
  starts = 0;
  kills = 0;
  /** Extra arguments for node (e.g. --cpu-prof). */
  nodeArgs: string[] = [];
  /** Exits at a step the process was told to die at (FAULT_KILL_AT), and exits nobody asked for. */
  faultExits = 0;
  unexpectedExits: string[] = [];
  /** Whether the current child's exit was asked for (per child: a killed child may close after the next one started). */
  private life = { expected: false };
  private tail = "";

  constructor(
    readonly name: string,
    private readonly entry: string,
    private readonly env: NodeJS.ProcessEnv,
    readonly port?: number,
  ) {}

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get alive(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The last lines the process wrote (for the report when something fails). */
  output(): string {
    return this.tail;
  }

  async start(extraEnv: NodeJS.ProcessEnv = {}): Promise<void> {
    const child = spawn(process.execPath, [...this.nodeArgs, ...compiledEntryArgs(compiledService(), this.entry)], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: serviceDatabaseEnv({ ...process.env, ...this.env, ...(this.port ? { PORT: String(this.port) } : {}), ...extraEnv }),
    });
    const logFile = process.env.CHAOS_LOG_DIR ? join(process.env.CHAOS_LOG_DIR, `${this.name}.log`) : undefined;
    // This start's own output (a line may arrive split over two chunks).
    let own = "";
    const keep = (d: Buffer) => {
      const text = d.toString();
      own = (own + text).slice(-4000);
      this.tail = (this.tail + text).slice(-8000);
      if (logFile) appendFileSync(logFile, d);
    };
    const life = { expected: false };
    this.life = life;
    child.stdout!.on("data", keep);
    child.stderr!.on("data", keep);
    this.child = child;
    running.add(child);
    child.once("exit", () => running.delete(child));
    // "close", not "exit": the process's last lines (the FAULT_KILL_AT notice) may arrive after "exit".
    child.once("close", (code, signal) => {
      if (life.expected) return;
      // A process told to die at a step kills itself with SIGKILL, maybe before its notice is written.
      const toldToDie = Boolean(extraEnv.FAULT_KILL_AT) || own.includes("FAULT_KILL_AT: killing this process");
      if (toldToDie && signal === "SIGKILL") this.faultExits++;
      else this.unexpectedExits.push(`${this.name} exited by itself (code ${code}, signal ${signal}): ${this.tail.slice(-300)}`);
    });
    this.starts++;
    if (!this.port) return;
    for (let i = 0; i < 600; i++) {
      if (!this.alive) throw new Error(`${this.name} exited while starting:\n${this.tail}`);
      if (
        await fetch(`${this.base}/readyz`).then(
          (r) => r.ok,
          () => false,
        )
      )
        return;
      await sleep(100);
    }
    throw new Error(`${this.name} did not become ready:\n${this.tail}`);
  }

  /** SIGKILL: no shutdown hook runs. Returns false when the process was not running. */
  async kill(): Promise<boolean> {
    const child = this.child;
    if (!child || !this.alive) return false;
    this.life.expected = true;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await exited;
    this.kills++;
    return true;
  }

  /** SIGTERM and wait: the graceful stop. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || !this.alive) return;
    this.life.expected = true;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await Promise.race([exited, sleep(20_000).then(() => child.kill("SIGKILL"))]);
  }
}

export function apiProcess(name: string, port: number, env: NodeJS.ProcessEnv): Service {
  return new Service(name, "src/main.ts", { LOG_LEVEL: process.env.CHAOS_LOG_LEVEL ?? "warn", RATE_LIMIT_PER_SECOND: "0", ...env }, port);
}

export function workerProcess(name: string, env: NodeJS.ProcessEnv): Service {
  return new Service(name, "src/workers/main.ts", { LOG_LEVEL: process.env.CHAOS_LOG_LEVEL ?? "warn", ...env });
}

/** What the clients saw: the faults as a client meets them. */
export interface ClientStats {
  requests: number;
  /** Connection refused or cut: the API process was down. */
  network_errors: number;
  /** 503 answers, and how many of them lacked Retry-After (must be 0). */
  unavailable_503: number;
  missing_retry_after: number;
  /** Any other 5xx (must be 0). */
  server_errors: number;
  server_error_samples: string[];
  network_error_samples: string[];
  /** 409 idempotency_conflict: the same key in progress elsewhere, retried. */
  in_progress_409: number;
  /** Requests with no answer within 30 s (must be 0: a hung request). */
  timeouts: number;
}

export function newStats(): ClientStats {
  return {
    requests: 0,
    network_errors: 0,
    unavailable_503: 0,
    missing_retry_after: 0,
    server_errors: 0,
    server_error_samples: [],
    network_error_samples: [],
    in_progress_409: 0,
    timeouts: 0,
  };
}

export interface Answer {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/**
 * Sends one request until it gets a definitive answer (anything but a network error or a 503),
 * always with the same body and Idempotency-Key, as a well-behaved client does. `bases` are tried
 * in turn (several API processes behind no balancer). Gives up after `maxMs`.
 */
export async function send(
  stats: ClientStats,
  bases: string[],
  method: string,
  path: string,
  key: string,
  body?: unknown,
  idempotencyKey?: string,
  maxMs = 120_000,
): Promise<Answer> {
  const until = Date.now() + maxMs;
  let last = "";
  for (let attempt = 0; ; attempt++) {
    const base = bases[attempt % bases.length]!;
    stats.requests++;
    try {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      last = `${res.status} ${text.slice(0, 200)}`;
      if (res.status === 409 && text.includes('"idempotency_conflict"')) {
        // The same key is being handled by another request (another process): ask again.
        stats.in_progress_409++;
        await sleep(50);
      } else if (res.status === 503) {
        stats.unavailable_503++;
        const after = Number(res.headers.get("retry-after"));
        if (!(after > 0)) stats.missing_retry_after++;
        await sleep(Math.min(after > 0 ? after * 1000 : 1000, 250 + attempt * 50));
      } else {
        let parsed: unknown = null;
        try {
          parsed = text ? JSON.parse(text) : null;
        } catch {
          // The API answers JSON or problem+json, always: anything else is a server fault.
          stats.server_errors++;
          if (stats.server_error_samples.length < 5) stats.server_error_samples.push(`${method} ${path} → ${res.status} not JSON: ${text.slice(0, 200)}`);
          return { status: res.status, body: text };
        }
        if (res.status >= 500) {
          stats.server_errors++;
          if (stats.server_error_samples.length < 5) stats.server_error_samples.push(`${method} ${path} → ${res.status} ${text.slice(0, 300)}`);
        }
        return { status: res.status, body: parsed };
      }
    } catch (err) {
      last = String((err as Error).cause ?? err);
      if ((err as Error).name === "TimeoutError") {
        stats.timeouts++;
        if (stats.server_error_samples.length < 5) stats.server_error_samples.push(`${method} ${path}: no answer within 30 s`);
      }
      stats.network_errors++;
      if (stats.network_error_samples.length < 5) stats.network_error_samples.push(`${method} ${path}: ${last}`);
      await sleep(100);
    }
    if (Date.now() > until) throw new Error(`no definitive answer to ${method} ${path} (${idempotencyKey}) after ${maxMs / 1000} s; last: ${last}`);
  }
}

/** `send` that must succeed (2xx). */
export async function must(
  stats: ClientStats,
  bases: string[],
  method: string,
  path: string,
  key: string,
  body?: unknown,
  idempotencyKey?: string,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test and benchmark helpers answer whatever JSON the API sent
): Promise<any> {
  // The same request makes the same key (a valid one: printable, at most 255 characters, whatever the body holds).
  const derived = `${method}:${path}:${createHash("sha256")
    .update(JSON.stringify(body ?? null))
    .digest("hex")}`;
  const r = await send(stats, bases, method, path, key, body, idempotencyKey ?? derived);
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body).slice(0, 400)}`);
  return r.body;
}

/** Runs `items` through `op` with at most `concurrency` at once. */
export async function pool<T>(items: T[], concurrency: number, op: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const i = next++;
        await op(items[i]!, i);
      }
    }),
  );
}

export interface Market {
  key: string;
  operators: string[];
  customers: string[];
}

/** One marketplace (fees 8% + 2%), operators, prepaid customers with deposits of `asset`, settled by the marketplace. */
export async function seedMarket(
  stats: ClientStats,
  bases: string[],
  adminKey: string,
  o: { asset: string; operators: number; customers: number; deposit: string },
): Promise<Market> {
  await must(stats, bases, "POST", "/v1/marketplaces", adminKey, { id: "chaos", name: "chaos" });
  await must(stats, bases, "POST", "/v1/marketplaces/chaos/fee-schedules", adminKey, {
    effective_from: "2020-01-01T00:00:00Z",
    rules: [
      { party: "marketplace", bps: 800 },
      { party: "protocol", bps: 200 },
    ],
  });
  const key = (await must(stats, bases, "POST", "/v1/api-keys", adminKey, { name: "chaos", role: "marketplace", scope_id: "chaos" })).secret as string;
  const operators = Array.from({ length: o.operators }, (_, i) => `op-${i}`);
  const customers = Array.from({ length: o.customers }, (_, i) => `cust-${i}`);
  await pool(operators, 8, async (id) => {
    await must(stats, bases, "POST", "/v1/operators", key, { id, name: id });
  });
  await pool(customers, 8, async (id) => {
    await must(stats, bases, "POST", "/v1/customers", key, { id, billing: "prepaid" });
    await must(stats, bases, "POST", `/v1/customers/${id}/deposits`, key, { asset: o.asset, amount: o.deposit });
  });
  // The marketplace hands over the deposits it claimed (their usage is then paid out from money
  // received): finance records the receipt, a second person's finance key approves it.
  const finance = (await must(stats, bases, "POST", "/v1/api-keys", adminKey, { name: "chaos finance", role: "finance" }, "seed-finance-key")).secret as string;
  const receipt = await must(
    stats,
    bases,
    "POST",
    "/v1/marketplaces/chaos/receipts",
    finance,
    {
      asset: o.asset,
      amount: (BigInt(o.deposit) * BigInt(o.customers)).toString(),
      reference: `chaos settlement ${o.asset}`,
    },
    `seed-receipt-${o.asset}`,
  );
  const controller = (await must(stats, bases, "POST", "/v1/api-keys", adminKey, { name: "chaos controller", role: "finance" }, "seed-controller-key"))
    .secret as string;
  await must(stats, bases, "POST", `/v1/proposals/${receipt.id}/approve`, controller, {}, `seed-approve-${o.asset}`);
  return { key, operators, customers };
}

// The usage's period: two hours before this run started (machine time, or CLOCK_START's), fixed for
// the run so that a retried record is the very same record.
const RUN_STARTED = process.env.CLOCK_START ? Date.parse(process.env.CLOCK_START) : Date.now();
const PERIOD_START = new Date(Math.floor(RUN_STARTED / 3_600_000) * 3_600_000 - 2 * 3_600_000).toISOString();
const PERIOD_END = new Date(Math.floor(RUN_STARTED / 3_600_000) * 3_600_000 - 3_600_000).toISOString();

/** A usage record of one GPU-hour-ish slice; the same id always gives the same record. */
export function usageRecord(m: Market, asset: string, id: string) {
  let h = 0;
  for (const ch of id) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return {
    external_id: id,
    operator_id: m.operators[h % m.operators.length]!,
    customer_id: m.customers[(h >>> 8) % m.customers.length]!,
    resource: "gpu:h100",
    unit: "gpu_second",
    quantity: String(60 + (h % 3540)),
    unit_price: "0.000694",
    asset,
    period_start: PERIOD_START,
    period_end: PERIOD_END,
  };
}

/**
 * Ingest load: `batches` of `batchSize` records from one client and `singles` records from
 * `singleClients` clients, each request retried with its own key until answered. Returns the ids
 * the service acknowledged (accepted, or duplicate of an earlier acceptance).
 */
export async function ingest(
  stats: ClientStats,
  bases: string[],
  m: Market,
  asset: string,
  tag: string,
  o: { batches: number; batchSize: number; singles: number; singleClients: number },
): Promise<{ acknowledged: Set<string>; sent: string[] }> {
  const acknowledged = new Set<string>();
  const sent: string[] = [];
  const failures: string[] = [];
  await Promise.all([
    (async () => {
      for (let b = 0; b < o.batches; b++) {
        const ids = Array.from({ length: o.batchSize }, (_, i) => `${tag}-b${b}-r${i}`);
        sent.push(...ids);
        const r = await send(stats, bases, "POST", "/v1/usage/batch", m.key, { records: ids.map((id) => usageRecord(m, asset, id)) }, `${tag}-batch-${b}`);
        if (r.status !== 200) {
          failures.push(`batch ${b}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
          continue;
        }
        r.body.results.forEach((item: { status: string; external_id?: string }, k: number) => {
          if (item.status !== "accepted" && item.status !== "duplicate") failures.push(`batch ${b}: ${JSON.stringify(item).slice(0, 200)}`);
          else if (item.external_id !== ids[k]) failures.push(`batch ${b}: result ${k} is ${item.external_id}, sent ${ids[k]}`);
          else acknowledged.add(ids[k]!);
        });
        if (r.body.results.length !== ids.length) failures.push(`batch ${b}: ${r.body.results.length} results for ${ids.length} records`);
      }
    })(),
    ...Array.from({ length: o.singleClients }, async (_, w) => {
      for (let i = w; i < o.singles; i += o.singleClients) {
        const id = `${tag}-s${i}`;
        sent.push(id);
        const r = await send(stats, bases, "POST", "/v1/usage", m.key, usageRecord(m, asset, id), `${tag}-single-${i}`);
        if ((r.status === 200 || r.status === 201) && r.body.external_id === id) acknowledged.add(id);
        else failures.push(`single ${i}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
      }
    }),
  ]);
  if (failures.length > 0) throw new Error(`usage refused under chaos: ${failures.slice(0, 3).join("; ")}`);
  return { acknowledged, sent };
}

export interface Finding {
  check: string;
  ok: boolean;
  detail: string;
}

/** Every acknowledged record stored exactly once with its ledger transfer; nothing stored that was not sent. */
export async function checkUsage(dbUrl: string, sent: string[], acknowledged: Set<string>): Promise<{ findings: Finding[]; lost: number; doubled: number }> {
  const sql = postgres(dbUrl, { max: 1, onnotice: () => {} });
  try {
    const rows = await sql<{ external_id: string; n: number; transfers: number }[]>`
      select u.external_id, count(*)::int as n, count(t.id)::int as transfers
        from usage_records u left join transfers t on t.id = u.transfer_id
       group by u.external_id`;
    const stored = new Map(rows.map((r) => [r.external_id, r]));
    const lost = [...acknowledged].filter((id) => !stored.has(id));
    const doubled = rows.filter((r) => r.n !== 1);
    const unposted = rows.filter((r) => r.transfers !== r.n);
    const sentSet = new Set(sent);
    const strangers = rows.filter((r) => !sentSet.has(r.external_id));
    const { usageTransfers } = (await sql<{ usageTransfers: number }[]>`select count(*)::int as "usageTransfers" from transfers where metadata ? 'usage'`)[0]!;
    const findings = [
      {
        check: "every acknowledged record is stored",
        ok: lost.length === 0,
        detail: `${acknowledged.size} acknowledged, ${lost.length} lost${lost.length ? ` (e.g. ${lost.slice(0, 3).join(", ")})` : ""}`,
      },
      {
        check: "every record stored once",
        ok: doubled.length === 0 && stored.size === sentSet.size,
        detail: `${sentSet.size} sent, ${stored.size} stored, ${doubled.length} stored more than once`,
      },
      {
        check: "every stored record has its transfer, no extra transfers",
        ok: unposted.length === 0 && strangers.length === 0 && usageTransfers === rows.length,
        detail: `${usageTransfers} usage transfers for ${rows.length} records, ${unposted.length} without its transfer, ${strangers.length} never sent`,
      },
    ];
    // Lost: acknowledged but not stored, or sent and never acknowledged (the client gave up).
    return { findings, lost: lost.length + (sentSet.size - acknowledged.size), doubled: doubled.length };
  } finally {
    await sql.end();
  }
}

/** `npm run verify` against the database: invariants and the sealed hash chain. */
export function verify(dbUrl: string): Finding {
  const r = spawnSync(process.execPath, compiledEntryArgs(compiledService(), "src/verify-cli.ts"), {
    cwd: root,
    env: serviceDatabaseEnv({ ...process.env, DATABASE_URL: dbUrl, LOG_LEVEL: "silent" }),
    encoding: "utf8",
  });
  return {
    check: "npm run verify (invariants and hash chain)",
    ok: r.status === 0,
    detail: `${(r.stdout + r.stderr).trim().split("\n").join(" / ").slice(0, 600)}`,
  };
}

/** The clients met no 5xx other than 503 and no answer that was not JSON, none hung, and every 503 said when to retry. */
export function checkClient(stats: ClientStats): Finding[] {
  return [
    { check: "no request hung (an answer within 30 s)", ok: stats.timeouts === 0, detail: `${stats.timeouts} timeouts` },
    { check: "no 5xx other than 503", ok: stats.server_errors === 0, detail: stats.server_errors === 0 ? "none" : stats.server_error_samples.join(" | ") },
    {
      check: "every 503 carries Retry-After",
      ok: stats.missing_retry_after === 0,
      detail: `${stats.unavailable_503} answers 503, ${stats.missing_retry_after} without Retry-After`,
    },
  ];
}

/** No service process died unless the run killed it or told it to die at a step. */
export function checkExits(services: Service[]): Finding {
  const unexpected = services.flatMap((s) => s.unexpectedExits);
  return {
    check: "no process exited by itself",
    ok: unexpected.length === 0,
    detail: unexpected.length === 0 ? `${services.length} processes` : unexpected.slice(0, 2).join(" | "),
  };
}
