/**
 * A PgBouncer in transaction pooling mode in front of a PostgreSQL server, for the tests, the chaos
 * run and local use (`npm run db:pgbouncer`, scripts/pgbouncer.ts). Writes its pgbouncer.ini,
 * user list, log and pidfile into one folder; listens on 127.0.0.1 only; trusts loopback clients.
 * Every database name is passed through to the server (`* = host=… port=…`), so databases
 * created after it started (one per test file) are reachable at once.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import postgres from "postgres";

export interface PgBouncerOptions {
  /** Folder for pgbouncer.ini, userlist.txt, pgbouncer.log and pgbouncer.pid. */
  dir: string;
  /** Port PgBouncer listens on (127.0.0.1). */
  port: number;
  /** The PostgreSQL server behind it. */
  serverHost: string;
  serverPort: number;
  /** Users PgBouncer lets in (trust: the user name must still be listed). */
  users: string[];
  /** Server connections for all databases together; by default half the server's max_connections. */
  serverConnections?: number;
}

const asRoot = () => process.getuid?.() === 0;

/** The server's max_connections, read over a direct connection. */
export async function serverMaxConnections(host: string, port: number, user: string): Promise<number> {
  const sql = postgres({ host, port, user, database: "postgres", max: 1, prepare: false, onnotice: () => {} });
  try {
    const [row] = await sql.unsafe<{ max_connections: string }[]>("show max_connections");
    return Number(row!.max_connections);
  } finally {
    await sql.end();
  }
}

/** pgbouncer.ini for transaction pooling. */
export function pgbouncerIni(o: PgBouncerOptions & { serverConnections: number }): string {
  const perDatabase = Math.min(30, o.serverConnections);
  return `;; Written by scripts/pgbouncer.ts; rewritten at every start.
[databases]
* = host=${o.serverHost} port=${o.serverPort}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${o.port}
unix_socket_dir =
auth_type = trust
auth_file = ${join(o.dir, "userlist.txt")}
admin_users = ${o.users[0]}
pool_mode = transaction
;; Clients are cheap (several test files at once, each with pools of about ten, and the service
;; processes they start); server connections are what the server counts against max_connections.
max_client_conn = 2000
default_pool_size = ${perDatabase}
max_db_connections = ${perDatabase}
max_user_connections = ${o.serverConnections}
;; Idle server connections go soon: a database is only dropped or copied (CREATE DATABASE ...
;; TEMPLATE) once nothing is connected to it.
server_idle_timeout = 5
autodb_idle_timeout = 30
;; After the server restarts, connect again within a second (the default waits 15 s).
server_login_retry = 1
server_connect_timeout = 5
query_wait_timeout = 120
;; Drivers that set it at startup (JDBC, psycopg); the service sends none when DATABASE_POOLER is set.
ignore_startup_parameters = extra_float_digits
log_connections = 0
log_disconnections = 0
logfile = ${join(o.dir, "pgbouncer.log")}
pidfile = ${join(o.dir, "pgbouncer.pid")}
`;
}

/** Writes the folder's files; as root, hands the folder to `postgres` (PgBouncer refuses to run as root). */
export async function writeConfig(o: PgBouncerOptions): Promise<string> {
  mkdirSync(o.dir, { recursive: true });
  const max = o.serverConnections ?? Math.max(4, Math.floor((await serverMaxConnections(o.serverHost, o.serverPort, o.users[0]!)) / 2));
  const ini = join(o.dir, "pgbouncer.ini");
  writeFileSync(ini, pgbouncerIni({ ...o, serverConnections: max }));
  writeFileSync(join(o.dir, "userlist.txt"), o.users.map((u) => `"${u}" ""`).join("\n") + "\n");
  if (asRoot()) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
    for (const f of ["", "pgbouncer.ini", "userlist.txt"]) chownSync(join(o.dir, f), uid, gid);
    for (const f of ["pgbouncer.log", "pgbouncer.pid"]) if (existsSync(join(o.dir, f))) chownSync(join(o.dir, f), uid, gid);
  }
  return ini;
}

/** The pgbouncer binary (PGBOUNCER, or on the PATH / Debian's /usr/sbin). */
export function pgbouncerBinary(): string {
  if (process.env.PGBOUNCER) return process.env.PGBOUNCER;
  for (const p of ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer", "/usr/local/bin/pgbouncer"]) if (existsSync(p)) return p;
  throw new Error("pgbouncer not found: install it (Debian: apt-get install -y pgbouncer) or set PGBOUNCER");
}

/** Arguments for pgbouncer: as root it switches to the `postgres` user itself (-u). */
export function pgbouncerArgs(ini: string, daemon: boolean): string[] {
  return [...(daemon ? ["-d"] : []), ...(asRoot() ? ["-u", "postgres"] : []), ini];
}

/** Resolves once something accepts connections on 127.0.0.1:port. */
export async function waitForPort(port: number, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, "127.0.0.1");
      s.once("connect", () => (s.destroy(), resolve(true)));
      s.once("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`nothing listens on 127.0.0.1:${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The pid in the folder's pidfile, when that process is alive. */
export function runningPid(dir: string): number | undefined {
  const file = join(dir, "pgbouncer.pid");
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, "utf8").trim());
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

/** Stops the PgBouncer of the folder's pidfile (SIGTERM, then waits up to 10 s); false when none ran. */
export async function stopByPidfile(dir: string): Promise<boolean> {
  const pid = runningPid(dir);
  if (pid === undefined) return false;
  process.kill(pid, "SIGTERM");
  for (let i = 0; i < 100 && runningPid(dir) === pid; i++) await new Promise((r) => setTimeout(r, 100));
  return true;
}

/** A PgBouncer child process of this one (the chaos run's): started in the foreground, stopped with the run. */
export class PgBouncerChild {
  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
  ) {}

  static async start(o: PgBouncerOptions): Promise<PgBouncerChild> {
    const ini = await writeConfig(o);
    const child = spawn(pgbouncerBinary(), pgbouncerArgs(ini, false), { stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr!.on("data", (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
    try {
      await Promise.race([
        waitForPort(o.port),
        new Promise((_, reject) => child.once("exit", (code) => reject(new Error(`pgbouncer exited (${code}): ${err}`)))),
      ]);
    } catch (e) {
      child.kill("SIGKILL");
      throw e;
    }
    return new PgBouncerChild(child, o.port);
  }

  /** The same URL with PgBouncer's port instead of the server's. */
  via(url: string): string {
    const u = new URL(url);
    u.port = String(this.port);
    return u.toString();
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once("exit", r));
    this.child.kill("SIGTERM");
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000)).then(() => this.child.kill("SIGKILL"))]);
  }
}
