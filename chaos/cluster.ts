/**
 * A private PostgreSQL server for the chaos runs: its own data folder and port, so that it can be
 * crashed and restarted without touching any other database on the machine. Uses the server
 * binaries of the machine's PostgreSQL (PG_BIN, or the newest /usr/lib/postgresql/N/bin). Durable
 * settings (fsync, synchronous_commit) are PostgreSQL's defaults and are checked.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import postgres from "postgres";

function binDir(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const base = "/usr/lib/postgresql";
  const versions = existsSync(base) ? readdirSync(base).filter((v) => existsSync(join(base, v, "bin", "initdb"))).sort((a, b) => Number(b) - Number(a)) : [];
  if (versions.length === 0) throw new Error("PostgreSQL server binaries not found: install Debian's postgresql package or set PG_BIN");
  return join(base, versions[0]!, "bin");
}

export class Cluster {
  readonly url: string;
  private readonly bin = binDir();
  private readonly dir: string;
  private readonly asRoot = userInfo().uid === 0;

  private constructor(readonly port: number) {
    this.dir = mkdtempSync(join(tmpdir(), "ledger-chaos-pg-"));
    this.url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  }

  /** initdb and start; as root, the server runs as the `postgres` user (PostgreSQL refuses root). */
  static async create(port: number): Promise<Cluster> {
    const c = new Cluster(port);
    chmodSync(c.dir, 0o755);
    if (c.asRoot) {
      const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
      const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
      chownSync(c.dir, uid, gid);
    }
    c.run("initdb", ["-D", c.data, "-A", "trust", "-U", "postgres", "--no-instructions", "-E", "UTF8"]);
    await c.start();
    const sql = postgres(c.url, { max: 1, onnotice: () => {} });
    const [s] = await sql`select current_setting('fsync') as fsync, current_setting('synchronous_commit') as sync`;
    await sql.end();
    if (s!.fsync !== "on" || s!.sync !== "on") throw new Error(`durable commits required: fsync=${s!.fsync} synchronous_commit=${s!.sync}`);
    return c;
  }

  private get data(): string {
    return join(this.dir, "data");
  }

  private run(tool: string, args: string[]): string {
    const cmd = join(this.bin, tool);
    const out = this.asRoot
      ? execFileSync("runuser", ["-u", "postgres", "--", cmd, ...args], { stdio: ["ignore", "pipe", "pipe"] })
      : execFileSync(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
    return out.toString();
  }

  async start(): Promise<void> {
    this.run("pg_ctl", ["-D", this.data, "-l", join(this.dir, "server.log"), "-w", "-t", "60", "start",
      "-o", `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c max_connections=200`]);
  }

  /** Stops the server; `immediate` is a crash (no checkpoint, clients cut), recovered from WAL at the next start. */
  async stop(mode: "immediate" | "fast" = "immediate"): Promise<void> {
    this.run("pg_ctl", ["-D", this.data, "-m", mode, "-w", "-t", "60", "stop"]);
  }

  async createDatabase(name: string): Promise<string> {
    const sql = postgres(this.url, { max: 1, onnotice: () => {} });
    await sql.unsafe(`create database ${name}`);
    await sql.end();
    const u = new URL(this.url);
    u.pathname = `/${name}`;
    return u.toString();
  }

  async destroy(): Promise<void> {
    try {
      await this.stop("immediate");
    } catch {
      // already stopped
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
