import { performance } from "node:perf_hooks";
import type { Config } from "../config.js";
import type { Logger } from "../log.js";
import { isDatabaseUnavailable, openDatabase, type Database, type Queryable } from "./client.js";

/** Where a read was answered from, and how far behind the primary that answer may be. */
export interface ReadChoice {
  db: Database;
  source: "primary" | "replica";
  /** At most this many milliseconds of the primary's commits may be missing from the answer (0: the primary itself). */
  stalenessMs: number;
}

export interface ReplicaSettings {
  /** Reads without a position go to the replica only while it is at most this far behind. */
  maxLagMs: number;
  /** How long a read with a position waits for the replica to replay it before asking the primary. */
  waitMs: number;
  /** How often the primary's WAL position and the replica's replay position are sampled. */
  sampleMs: number;
  /** Warnings (the replica unreachable or failing), at most one per `warnEveryMs`. */
  warn: (fields: Record<string, unknown>, message: string) => void;
  warnEveryMs: number;
  /** Writes answer `Ledger-Position` (one more, shared, query to the primary after their commit). */
  positionsOnWrites: boolean;
}

/** A WAL position as text (`16/B374D848`), as PostgreSQL writes it. */
export const walPosition = /^[0-9A-Fa-f]{1,8}\/[0-9A-Fa-f]{1,8}$/;

/** A WAL position as a number, to compare; null when the text is not one. */
export function lsnValue(text: string | null | undefined): bigint | null {
  if (!text || !walPosition.test(text)) return null;
  const [hi, lo] = text.split("/") as [string, string];
  return (BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The primary and a streaming replica of it. Every `sampleMs` it reads the primary's WAL position
 * (`pg_current_wal_flush_lsn()`, remembering when it asked) and the replica's replay position
 * (`pg_last_wal_replay_lsn()`): the replica then holds every commit the primary had made when the
 * newest sample it has replayed was taken, so its staleness is bounded by the age of that sample.
 * This holds when the primary is idle (its position stops moving and the replica reaches it), where
 * the replay timestamp would grow without the replica being behind.
 */
export class ReplicaRouter {
  /** Primary positions sampled, oldest first: when the question was sent, and the answer. */
  private samples: { at: number; lsn: bigint }[] = [];
  private replayed: bigint | null = null;
  /** The replica answered the last sample (and no read failed on it since). */
  private healthy = false;
  private timer: NodeJS.Timeout | undefined;
  private sampling: Promise<void> | undefined;
  private lastWarn = -Infinity;
  private inflight: Promise<string> | undefined;
  private queued: Promise<string> | undefined;

  constructor(
    readonly primary: Database,
    readonly replica: Database,
    private readonly settings: ReplicaSettings,
    /**
     * Where the primary's position is read (one connection of its own, so that the question does
     * not wait for a connection of the pool behind group-committed batches); the primary's pool when absent.
     */
    private readonly positions: Queryable & { close?(): Promise<void> } = primary,
  ) {}

  /** Starts sampling; the first sample is taken before it resolves. */
  get positionsOnWrites(): boolean {
    return this.settings.positionsOnWrites;
  }

  async start(): Promise<void> {
    await this.sample();
    this.timer = setInterval(() => {
      this.sampling ??= this.sample().finally(() => (this.sampling = undefined));
    }, this.settings.sampleMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.sampling;
    await this.replica.close();
    if (this.positions !== this.primary) await this.positions.close?.();
  }

  /**
   * The primary's WAL position now: every commit that finished before the call is at or below it.
   * Concurrent callers share one query (a caller waits for the next query to start after its own call).
   */
  position(): Promise<string> {
    if (this.queued) return this.queued;
    if (!this.inflight) return this.launch();
    const queued = this.inflight
      .then(
        () => {},
        () => {},
      )
      .then(() => {
        this.queued = undefined;
        return this.launch();
      });
    this.queued = queued;
    return queued;
  }

  private launch(): Promise<string> {
    const p = this.positions.query<{ lsn: string }>("select pg_current_wal_flush_lsn()::text as lsn").then((r) => r[0]!.lsn);
    this.inflight = p;
    p.then(
      () => {},
      () => {},
    ).finally(() => {
      if (this.inflight === p) this.inflight = undefined;
    });
    return p;
  }

  /** Chooses where a read goes: the replica when it holds `minPosition` (waiting up to `waitMs` for it) or, without one, when it lags at most `maxLagMs`. */
  async choose(minPosition?: string | null): Promise<ReadChoice> {
    const primary: ReadChoice = { db: this.primary, source: "primary", stalenessMs: 0 };
    if (!this.healthy) return primary;
    const staleness = this.staleness();
    if (minPosition === undefined || minPosition === null) return staleness <= this.settings.maxLagMs ? this.onReplica(staleness) : primary;
    const wanted = lsnValue(minPosition);
    if (wanted === null) return primary;
    if (this.replayed !== null && this.replayed >= wanted) return this.onReplica(staleness);
    if (staleness > this.settings.maxLagMs) return primary;
    const until = performance.now() + this.settings.waitMs;
    while (performance.now() < until) {
      try {
        const [r] = await this.replica.query<{ lsn: string | null }>("select pg_last_wal_replay_lsn()::text as lsn");
        const replayed = lsnValue(r?.lsn);
        if (replayed !== null && replayed >= wanted) {
          if (this.replayed === null || replayed > this.replayed) this.replayed = replayed;
          return this.onReplica(this.staleness());
        }
      } catch (err) {
        this.failed(err);
        return primary;
      }
      await sleep(Math.min(10, this.settings.waitMs));
    }
    return primary;
  }

  /** A read on the replica failed: the caller answers from the primary; a replica gone away is not used until it answers a sample again. */
  failed(err: unknown): void {
    const code = (err as { code?: unknown } | null)?.code;
    if (isDatabaseUnavailable(err)) this.healthy = false;
    // A refusal of the service's own (a row the replica does not hold yet) is answered by the primary without a warning.
    else if (typeof code !== "string" || !/^[0-9A-Z]{5}$/.test(code)) return;
    this.warnOnce({ err: { code: (err as { code?: string }).code, message: (err as Error).message } }, "read replica failed: reading from the primary");
  }

  private onReplica(stalenessMs: number): ReadChoice {
    return { db: this.replica, source: "replica", stalenessMs: Math.ceil(stalenessMs) };
  }

  /** Milliseconds since the newest sampled primary position the replica had replayed (Infinity when none). */
  private staleness(): number {
    if (this.replayed === null) return Infinity;
    for (let i = this.samples.length - 1; i >= 0; i--) if (this.samples[i]!.lsn <= this.replayed) return performance.now() - this.samples[i]!.at;
    return Infinity;
  }

  private async sample(): Promise<void> {
    const at = performance.now();
    try {
      const [p] = await this.positions.query<{ lsn: string }>("select pg_current_wal_flush_lsn()::text as lsn");
      this.samples.push({ at, lsn: lsnValue(p!.lsn)! });
      // Enough history to tell any staleness up to several times the bound.
      const keep = Math.max(50, Math.ceil((this.settings.maxLagMs * 4) / this.settings.sampleMs));
      if (this.samples.length > keep) this.samples.splice(0, this.samples.length - keep);
    } catch {
      // The primary's own failures are answered by the requests that use it.
    }
    try {
      const [r] = await this.replica.query<{ lsn: string | null }>("select pg_last_wal_replay_lsn()::text as lsn");
      const replayed = lsnValue(r?.lsn);
      if (replayed === null) throw Object.assign(new Error("the replica is not a standby (pg_last_wal_replay_lsn() is null)"), { code: "NOT_STANDBY" });
      this.replayed = replayed;
      this.healthy = true;
    } catch (err) {
      this.healthy = false;
      this.warnOnce({ err: { code: (err as { code?: string }).code, message: (err as Error).message } }, "read replica unreachable: reading from the primary");
    }
  }

  private warnOnce(fields: Record<string, unknown>, message: string): void {
    const now = performance.now();
    if (now - this.lastWarn < this.settings.warnEveryMs) return;
    this.lastWarn = now;
    this.settings.warn(fields, message);
  }
}

/** Opens the replica's pool (the primary's clock travels with it) and starts sampling. */
export async function openReplicaRouter(
  primary: Database,
  url: string,
  options: Omit<ReplicaSettings, "sampleMs" | "warnEveryMs" | "positionsOnWrites"> & { maxConnections: number; positionsOnWrites?: boolean },
): Promise<ReplicaRouter> {
  // The primary's pooler setting (DATABASE_POOLER) holds for its position connection, which goes
  // where the primary's pool goes, and for the replica, which may sit behind a pooler of its own
  // (unnamed statements are harmless on a direct connection).
  const pooler = primary.driver.kind === "postgres" ? primary.driver.pooler : "none";
  const replica = await openDatabase({ url, maxConnections: options.maxConnections, clock: primary.clock, pooler });
  const positions =
    primary.driver.kind === "postgres" ? await openDatabase({ url: primary.driver.url, maxConnections: 1, clock: primary.clock, pooler }) : primary;
  const settings = {
    ...options,
    positionsOnWrites: options.positionsOnWrites ?? true,
    // Several samples within the bound, so that staleness is known to a fraction of it.
    sampleMs: Math.max(10, Math.min(100, Math.floor(options.maxLagMs / 4))),
    warnEveryMs: 10_000,
  };
  const router = new ReplicaRouter(primary, replica, settings, positions);
  await router.start();
  return router;
}

/** The replica of DATABASE_REPLICA_URL, when set (PostgreSQL only: without DATABASE_URL the process exits saying so). */
export async function openConfiguredReplica(
  config: Pick<Config, "DATABASE_URL" | "DATABASE_REPLICA_URL" | "REPLICA_MAX_LAG_MS" | "REPLICA_WAIT_MS" | "REPLICA_WRITE_POSITIONS" | "DB_POOL_SIZE">,
  primary: Database,
  log: Logger,
): Promise<ReplicaRouter | undefined> {
  if (!config.DATABASE_REPLICA_URL) return undefined;
  if (!config.DATABASE_URL) {
    log.fatal("DATABASE_REPLICA_URL is set without DATABASE_URL: a replica serves reads of a PostgreSQL primary; unset it or set DATABASE_URL");
    process.exit(1);
  }
  const router = await openReplicaRouter(primary, config.DATABASE_REPLICA_URL, {
    maxLagMs: config.REPLICA_MAX_LAG_MS,
    waitMs: config.REPLICA_WAIT_MS,
    positionsOnWrites: config.REPLICA_WRITE_POSITIONS === "true",
    maxConnections: config.DB_POOL_SIZE,
    warn: (fields, message) => log.warn(fields, message),
  });
  log.info(
    { max_lag_ms: config.REPLICA_MAX_LAG_MS, wait_ms: config.REPLICA_WAIT_MS },
    "read replica configured: balance reads, statements, earnings and reports may be answered from it",
  );
  return router;
}
