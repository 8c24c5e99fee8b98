/**
 * A private PostgreSQL server for the chaos runs: its own data folder and port, so that it can be
 * crashed and restarted without touching any other database on the machine. Uses the server
 * binaries of the machine's PostgreSQL (PG_BIN, or the newest /usr/lib/postgresql/N/bin). Durable
 * settings (fsync, synchronous_commit) are PostgreSQL's defaults and are checked.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import postgres from "postgres";

function binDir(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const base = "/usr/lib/postgresql";
  const versions = existsSync(base)
    ? readdirSync(base)
        .filter((v) => existsSync(join(base, v, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0) throw new Error("PostgreSQL server binaries not found: install Debian's postgresql package or set PG_BIN");
  return join(base, versions[0]!, "bin");
}

export class Cluster {
  readonly url: string;
  private readonly bin = binDir();
  /** The server's data folder, which also holds its Unix socket. */
  readonly dir: string;
  private readonly asRoot = userInfo().uid === 0;

  private constructor(
    readonly port: number,
    private readonly settings: string[],
  ) {
    this.dir = mkdtempSync(join(tmpdir(), "ledger-chaos-pg-"));
    this.url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  }

  /** initdb and start; as root, the server runs as the `postgres` user (PostgreSQL refuses root). */
  static async create(port: number, settings: string[] = []): Promise<Cluster> {
    const c = new Cluster(port, settings);
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
    this.run("pg_ctl", [
      "-D",
      this.data,
      "-l",
      join(this.dir, "server.log"),
      "-w",
      "-t",
      "60",
      "start",
      "-o",
      [`-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c max_connections=200`, ...this.settings.map((s) => `-c ${s}`)].join(" "),
    ]);
  }

  /** Stops the server; `immediate` is a crash (no checkpoint, clients cut), recovered from WAL at the next start. */
  async stop(mode: "immediate" | "fast" = "immediate"): Promise<void> {
    this.run("pg_ctl", ["-D", this.data, "-m", mode, "-w", "-t", "60", "stop"]);
  }

  /**
   * CPU seconds the server has used so far: the postmaster, its live processes, and those it has
   * reaped (connections that ended), from /proc.
   */
  cpuSeconds(): number {
    const stat = (pid: string) => readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    const postmaster = readFileSync(join(this.data, "postmaster.pid"), "utf8").split("\n")[0]!.trim();
    const pm = stat(postmaster);
    // After "pid (comm) ": state ppid … utime is field 14 of the whole line, i.e. index 11 here.
    let ticks = Number(pm[11]) + Number(pm[12]) + Number(pm[13]) + Number(pm[14]);
    for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
      try {
        const f = stat(pid);
        if (f[1] === postmaster) ticks += Number(f[11]) + Number(f[12]);
      } catch {
        // gone meanwhile
      }
    }
    return ticks / 100;
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
