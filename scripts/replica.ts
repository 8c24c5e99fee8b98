/**
 * `npm run db:replica`: a streaming read replica of a local PostgreSQL server, for DATABASE_REPLICA_URL
 * (docs/scaling.md, "Read replica"). Copies the primary with `pg_basebackup -R` (a physical copy,
 * then streaming replication), starts it as a hot standby listening on 127.0.0.1 only, and waits
 * until it accepts connections and streams. `--stop` stops it; `--reset` starts from a fresh copy.
 *
 *   npm run db:replica -- [--primary postgres://postgres@127.0.0.1:5432/postgres] [--port 5433] [--dir DIR] [--reset]
 *   npm run db:replica -- --stop [--port 5433] [--dir DIR]
 *
 * The folder (default: the temporary folder's `ledger-replica-PORT`) holds the data folder, the log
 * (replica.log) and the pidfile (replica.pid). Run as root, the server runs as the `postgres` user.
 * The primary must allow replication connections from 127.0.0.1 for its user (pg_hba.conf); when it
 * does not, the script says which line is missing and changes nothing.
 */
import { execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import postgres from "postgres";

export interface ReplicaOptions {
  /** postgres:// URL of the primary (host, port and user are used). */
  primaryUrl: string;
  /** The replica's port on 127.0.0.1. */
  port: number;
  /** Folder of the replica: data/, replica.log, replica.pid. */
  dir: string;
  /** Start from a fresh copy even if the folder holds one. */
  reset?: boolean;
  /** PostgreSQL's server binaries; the newest /usr/lib/postgresql/N/bin when absent. */
  bin?: string;
  /** How long to wait for the replica to accept connections and stream. */
  timeoutMs?: number;
}

const asRoot = userInfo().uid === 0;

export function serverBinaries(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const base = "/usr/lib/postgresql";
  const versions = existsSync(base)
    ? readdirSync(base)
        .filter((v) => existsSync(join(base, v, "bin", "pg_basebackup")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0) throw new Error("PostgreSQL server binaries not found: install Debian's postgresql package or set PG_BIN");
  return join(base, versions[0]!, "bin");
}

/** Runs a PostgreSQL tool, as the postgres user when this process is root (the server refuses root). */
function run(bin: string, tool: string, args: string[]): string {
  const cmd = join(bin, tool);
  const out = asRoot
    ? execFileSync("runuser", ["-u", "postgres", "--", cmd, ...args], { stdio: ["ignore", "pipe", "pipe"] })
    : execFileSync(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
  return out.toString();
}

function ownedByPostgres(path: string): void {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  if (!asRoot) return;
  const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"]).toString().trim());
  chownSync(path, id("-u"), id("-g"));
}

export const replicaUrl = (port: number, database = "postgres") => `postgres://postgres@127.0.0.1:${port}/${database}`;

/** The settings a hot standby must have at least as high as its primary's. */
async function primarySettings(primaryUrl: string): Promise<Record<string, string>> {
  const sql = postgres(primaryUrl, { max: 1, onnotice: () => {} });
  try {
    const names = ["max_connections", "max_worker_processes", "max_prepared_transactions", "max_locks_per_transaction", "max_wal_senders"];
    const rows = await sql<{ name: string; setting: string }[]>`select name, setting from pg_settings where name = any(${names})`;
    return Object.fromEntries(rows.map((r) => [r.name, r.setting]));
  } finally {
    await sql.end();
  }
}

/** Fails with the pg_hba.conf line to add when the primary refuses replication connections from here. */
function checkReplicationAllowed(bin: string, primary: URL): void {
  const conn = `host=${primary.hostname} port=${primary.port || "5432"} user=${decodeURIComponent(primary.username || "postgres")} replication=true dbname=replication`;
  try {
    run(bin, "psql", [conn, "-Atc", "IDENTIFY_SYSTEM"]);
  } catch (err) {
    const why = String((err as { stderr?: Buffer }).stderr ?? err);
    throw new Error(
      `the primary refuses replication connections: ${why.trim()}\n` +
        `Add to the primary's pg_hba.conf (then reload it, e.g. pg_ctlcluster 15 main reload):\n` +
        `  host replication ${decodeURIComponent(primary.username || "postgres")} ${primary.hostname}/32 trust\n` +
        `(or scram-sha-256 with a password in ~/.pgpass), and check wal_level = replica and max_wal_senders > 0.`,
    );
  }
}

/** Makes (or reuses) the replica's data folder, starts the server, and waits until it streams. */
export async function startReplica(o: ReplicaOptions): Promise<string> {
  const bin = o.bin ?? serverBinaries();
  const primary = new URL(o.primaryUrl);
  const data = join(o.dir, "data");
  ownedByPostgres(o.dir);
  if (o.reset || !existsSync(join(data, "standby.signal"))) {
    checkReplicationAllowed(bin, primary);
    rmSync(data, { recursive: true, force: true });
    const user = decodeURIComponent(primary.username || "postgres");
    run(bin, "pg_basebackup", ["-h", primary.hostname, "-p", primary.port || "5432", "-U", user, "-D", data, "-R", "-X", "stream", "-c", "fast"]);
    const settings = await primarySettings(o.primaryUrl);
    const conf = [
      `listen_addresses = '127.0.0.1'`,
      `port = ${o.port}`,
      `unix_socket_directories = '${o.dir}'`,
      `hot_standby = on`,
      // Queries on the replica hold back the primary's vacuum instead of being cancelled by it.
      `hot_standby_feedback = on`,
      `shared_buffers = '64MB'`,
      `ssl = off`,
      ...Object.entries(settings).map(([k, v]) => `${k} = ${v}`),
    ];
    writeFileSync(join(data, "postgresql.conf"), `${conf.join("\n")}\n`);
    writeFileSync(join(data, "pg_hba.conf"), "local all all trust\nhost all all 127.0.0.1/32 trust\n");
    writeFileSync(join(data, "pg_ident.conf"), "");
    if (asRoot) execFileSync("chown", ["-R", "postgres:postgres", data]);
  }
  const running = (() => {
    try {
      run(bin, "pg_ctl", ["-D", data, "status"]);
      return true;
    } catch {
      return false;
    }
  })();
  if (!running) run(bin, "pg_ctl", ["-D", data, "-l", join(o.dir, "replica.log"), "-w", "-t", "60", "start"]);
  await waitStreaming(replicaUrl(o.port), o.timeoutMs ?? 60_000);
  const pid = execFileSync("head", ["-1", join(data, "postmaster.pid")])
    .toString()
    .trim();
  writeFileSync(join(o.dir, "replica.pid"), `${pid}\n`);
  return replicaUrl(o.port);
}

/** Waits until the server accepts connections, is a standby, and its WAL receiver streams. */
export async function waitStreaming(url: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < until) {
    const sql = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 2 });
    try {
      const [r] = await sql<{ standby: boolean; status: string | null }[]>`
        select pg_is_in_recovery() as standby, (select status from pg_stat_wal_receiver) as status`;
      if (!r!.standby) throw new Error(`${url} is not a standby`);
      if (r!.status === "streaming") return;
      last = `WAL receiver ${r!.status ?? "not running"}`;
    } catch (err) {
      if (/not a standby/.test((err as Error).message)) throw err;
      last = (err as Error).message;
    } finally {
      await sql.end({ timeout: 1 });
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the replica at ${url} did not stream within ${timeoutMs} ms: ${last}`);
}

/** Stops the replica (fast shutdown) and removes its pidfile; its data folder stays for the next start. */
export function stopReplica(dir: string, bin = serverBinaries()): boolean {
  const data = join(dir, "data");
  rmSync(join(dir, "replica.pid"), { force: true });
  if (!existsSync(join(data, "postmaster.pid"))) return false;
  run(bin, "pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "60", "stop"]);
  return true;
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const port = Number(arg("--port") ?? 5433);
  const dir = arg("--dir") ?? join(tmpdir(), `ledger-replica-${port}`);
  try {
    if (process.argv.includes("--stop")) {
      console.log(stopReplica(dir) ? `stopped the replica in ${dir}` : `no replica running in ${dir}`);
    } else {
      const primaryUrl = arg("--primary") ?? "postgres://postgres@127.0.0.1:5432/postgres";
      const url = await startReplica({ primaryUrl, port, dir, reset: process.argv.includes("--reset") });
      console.log(`replica of ${new URL(primaryUrl).host} streaming at ${url} (folder ${dir}; stop: npm run db:replica -- --stop --port ${port})`);
      console.log(`DATABASE_REPLICA_URL=${url}`);
    }
  } catch (err) {
    console.error((err as Error).message);
    process.exit(1);
  }
}
