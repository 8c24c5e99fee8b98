import cluster, { type Worker } from "node:cluster";
import { extname } from "node:path";
import { fileURLToPath } from "node:url";
import { resolveAdminKey } from "./admin-key.js";
import { loadChainsOrExit, type Config } from "./config.js";
import { openConfiguredDatabase } from "./db/open.js";
import type { Logger } from "./log.js";
import { resolveWebhookKey } from "./webhook-key.js";

/** How many processes of each kind one `npm start` runs. */
export interface ProcessPlan {
  api: number;
  workers: number;
  /** API processes on READ_PORT. */
  reads: number;
}

type Settings = Pick<Config, "API_PROCESSES" | "WORKER_PROCESSES" | "RUN_WORKERS" | "READ_PROCESSES">;

/**
 * The processes API_PROCESSES and WORKER_PROCESSES ask for; undefined when neither is set (one
 * process serves the API, with the workers inside unless RUN_WORKERS=false, and nothing supervises it).
 */
export function processPlan(config: Settings): ProcessPlan | undefined {
  if (config.API_PROCESSES === 1 && config.WORKER_PROCESSES === undefined && config.READ_PROCESSES === 0) return undefined;
  return { api: config.API_PROCESSES, workers: config.WORKER_PROCESSES ?? (config.RUN_WORKERS === "true" ? 1 : 0), reads: config.READ_PROCESSES };
}

/** A process of a cluster logs which kind it is and its pid on every line; a lone process logs as before. */
export function processLogger(log: Logger, kind: "api" | "worker", config?: Pick<Config, "PORT" | "READ_PORT" | "READ_PROCESSES">): Logger {
  const read = kind === "api" && config !== undefined && config.READ_PROCESSES > 0 && config.PORT === config.READ_PORT;
  return cluster.isWorker ? log.child({ process: read ? "read" : kind, pid: process.pid }) : log;
}

/**
 * Runs `stop` on the first SIGINT or SIGTERM. A supervised process ignores later ones: the
 * supervisor forwards a signal the process may have had already from its process group (a
 * terminal's Ctrl-C, a service manager stopping the group), and kills it itself after 30 s. A lone
 * process keeps Node's default for a second signal of the same kind (it ends at once).
 */
export function onStopSignal(stop: (signal: "SIGINT" | "SIGTERM") => void): void {
  let stopping = false;
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    const handler = () => {
      if (stopping) return;
      stopping = true;
      stop(signal);
    };
    if (cluster.isWorker) process.on(signal, handler);
    else process.once(signal, handler);
  }
}

/** Restart delays: the first restart after `baseMs`, doubling for each further death within `stableMs` of its start, at most `maxMs`. */
export interface Backoff {
  baseMs: number;
  maxMs: number;
  stableMs: number;
}

interface Slot {
  kind: "api" | "read" | "worker";
  index: number;
  worker?: Worker;
  startedAt: number;
  ready: boolean;
  /** The slot's first process became ready once: later deaths are restarted, not a failed start. */
  everReady: boolean;
  failures: number;
  timer?: NodeJS.Timeout;
}

/**
 * The supervising (primary) process of `npm start` with API_PROCESSES / WORKER_PROCESSES: applies
 * the migrations and creates the key files once, then forks the API processes (which share the
 * listeners' ports; the primary hands out connections in turn) and the worker processes, restarts
 * a process that dies (with backoff), and on SIGTERM or SIGINT stops them all, each draining.
 * Resolves with the exit code once every process has exited. A process that cannot start the
 * first time (bad configuration, a port in use) stops them all: 1.
 */
export async function superviseProcesses(
  config: Config,
  plan: ProcessPlan,
  log: Logger,
  backoff: Backoff = { baseMs: 250, maxMs: 30_000, stableMs: 60_000 },
): Promise<number> {
  if (!config.DATABASE_URL) {
    console.error(
      `Invalid configuration: API_PROCESSES=${config.API_PROCESSES}, WORKER_PROCESSES=${config.WORKER_PROCESSES ?? "unset"}, READ_PROCESSES=${config.READ_PROCESSES}: several processes need PostgreSQL (DATABASE_URL); the embedded PGlite database can be opened by one process only (leave API_PROCESSES, WORKER_PROCESSES and READ_PROCESSES unset)`,
    );
    return 1;
  }
  if (plan.reads > 0 && [config.PORT, config.MANAGEMENT_PORT].includes(config.READ_PORT)) {
    console.error(`Invalid configuration: READ_PORT (${config.READ_PORT}) must differ from PORT and MANAGEMENT_PORT`);
    return 1;
  }
  // Once, before any process starts: the chains' settings (one clear error), the migrations, and the
  // key files every process reads (created here, so that processes starting at once cannot race).
  loadChainsOrExit(config);
  const db = await openConfiguredDatabase(config);
  await db.close();
  resolveAdminKey(config);
  resolveWebhookKey(config);
  const supervisor = new Supervisor(plan, log, backoff, config.READ_PORT);
  process.on("SIGTERM", () => supervisor.stop("SIGTERM"));
  process.on("SIGINT", () => supervisor.stop("SIGINT"));
  return supervisor.start();
}

class Supervisor {
  private readonly slots: Slot[];
  private readonly apiEntry = process.argv[1]!;
  private readonly workerEntry = fileURLToPath(new URL(`./workers/main${extname(fileURLToPath(import.meta.url))}`, import.meta.url));
  private stopping = false;
  private exitCode = 0;
  private done!: (code: number) => void;
  private readonly finished = new Promise<number>((resolve) => (this.done = resolve));
  private forceTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly plan: ProcessPlan,
    private readonly log: Logger,
    private readonly backoff: Backoff,
    private readonly readPort: number,
  ) {
    const slot = (kind: Slot["kind"], index: number): Slot => ({ kind, index, startedAt: 0, ready: false, everReady: false, failures: 0 });
    const many = (kind: Slot["kind"], n: number) => Array.from({ length: n }, (_, i) => slot(kind, i + 1));
    this.slots = [...many("api", plan.api), ...many("read", plan.reads), ...many("worker", plan.workers)];
  }

  start(): Promise<number> {
    const { api, reads, workers } = this.plan;
    this.log.info({ api_processes: api, read_processes: reads, worker_processes: workers, primary_pid: process.pid }, "supervising processes");
    for (const s of this.slots) this.fork(s);
    return this.finished;
  }

  stop(why: string): void {
    if (this.stopping) return;
    this.stopping = true;
    this.log.info({ signal: why }, "stopping all processes");
    for (const s of this.slots) clearTimeout(s.timer);
    const live = this.slots.filter((s) => s.worker);
    if (live.length === 0) return this.done(this.exitCode);
    for (const s of live) s.worker!.process.kill("SIGTERM");
    // Each drains within its own 10 s; one that hangs well past that is killed.
    this.forceTimer = setTimeout(() => {
      for (const s of this.slots) s.worker?.process.kill("SIGKILL");
    }, 30_000);
  }

  private fork(s: Slot): void {
    s.timer = undefined;
    cluster.setupPrimary({ exec: s.kind === "worker" ? this.workerEntry : this.apiEntry });
    // The API processes serve HTTP only; the background workers run in the worker processes. Read
    // processes are API processes whose public listener is READ_PORT.
    const env = s.kind === "worker" ? {} : { RUN_WORKERS: "false", ...(s.kind === "read" ? { PORT: String(this.readPort) } : {}) };
    const w = cluster.fork(env);
    Object.assign(s, { worker: w, startedAt: Date.now(), ready: false });
    this.log.info({ process: name(s), pid: w.process.pid }, `started ${s.kind} process ${s.index} (pid ${w.process.pid})`);
    if (s.kind !== "worker") w.once("listening", () => this.ready(s));
    w.on("message", (m: unknown) => {
      if ((m as { type?: string } | null)?.type === "ready") this.ready(s);
    });
    w.once("exit", (code, signal) => this.exited(s, w, code, signal));
  }

  private ready(s: Slot): void {
    if (s.ready) return;
    s.ready = s.everReady = true;
    this.log.info({ process: name(s), pid: s.worker?.process.pid }, `${s.kind} process ${s.index} ready`);
  }

  private exited(s: Slot, w: Worker, code: number | null, signal: string | null): void {
    s.worker = undefined;
    if (this.stopping) {
      if (code !== 0) this.exitCode = 1; // did not drain: failed, or killed after 30 s
      if (this.slots.every((x) => !x.worker)) {
        clearTimeout(this.forceTimer);
        this.log.info({ exit_code: this.exitCode }, "all processes stopped");
        this.done(this.exitCode);
      }
      return;
    }
    if (!s.everReady) {
      this.log.fatal({ process: name(s), pid: w.process.pid, code, signal }, `${s.kind} process ${s.index} could not start: stopping all`);
      this.exitCode = 1;
      return this.stop("start failed");
    }
    s.failures = Date.now() - s.startedAt >= this.backoff.stableMs ? 1 : s.failures + 1;
    const delay = Math.min(this.backoff.maxMs, this.backoff.baseMs * 2 ** (s.failures - 1));
    this.log.error({ process: name(s), pid: w.process.pid, code, signal, restart_in_ms: delay }, `${s.kind} process ${s.index} died: restarting it`);
    s.timer = setTimeout(() => this.fork(s), delay);
  }
}

const name = (s: Slot) => `${s.kind}-${s.index}`;
