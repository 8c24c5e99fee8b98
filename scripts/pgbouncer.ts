/**
 * `npm run db:pgbouncer`: a PgBouncer in transaction pooling mode on 127.0.0.1:6432 in front of the
 * local PostgreSQL server (127.0.0.1:5432), in the foreground until Ctrl-C. Point the service at it
 * with DATABASE_URL=postgres://postgres@127.0.0.1:6432/<database> and DATABASE_POOLER=transaction,
 * or run the tests through it:
 *
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:6432/postgres DATABASE_POOLER=transaction npm test
 *
 * Options: --daemon (start in the background, pidfile in the folder, and return once it listens),
 * --stop (stop the one the folder's pidfile names), --port N (6432), --server HOST:PORT
 * (127.0.0.1:5432), --dir FOLDER (the temporary folder's ledger-pgbouncer-PORT), --users a,b (postgres; the first is the admin),
 * --server-connections N (server connections for all databases together; default half the server's
 * max_connections). Needs the pgbouncer binary (Debian: apt-get install -y pgbouncer). As root it
 * runs PgBouncer as the `postgres` user, which refuses to run as root.
 */
import { execFileSync, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pgbouncerArgs, pgbouncerBinary, runningPid, stopByPidfile, waitForPort, writeConfig } from "./pgbouncer-server.js";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const args = process.argv.slice(2);
const flag = (name: string) => args.includes(`--${name}`);
const option = (name: string, def: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1]! : def);

const port = Number(option("port", "6432"));
// In the temporary folder by default: PgBouncer runs as the postgres user, which must reach the folder
// (a checkout under a private folder would refuse it).
const dir = resolve(root, option("dir", join(tmpdir(), `ledger-pgbouncer-${port}`)));
const [serverHost, serverPort] = option("server", "127.0.0.1:5432").split(":") as [string, string];
const users = option("users", "postgres").split(",");
const serverConnections = args.includes("--server-connections") ? Number(option("server-connections", "")) : undefined;

async function main(): Promise<number> {
  if (flag("stop")) {
    const stopped = await stopByPidfile(dir);
    console.log(stopped ? `pgbouncer stopped (${dir})` : `no pgbouncer running from ${dir}`);
    return 0;
  }
  const already = runningPid(dir);
  if (already !== undefined) {
    console.error(`pgbouncer already runs from ${dir} (pid ${already}); stop it with npm run db:pgbouncer -- --stop`);
    return 1;
  }
  const ini = await writeConfig({ dir, port, serverHost, serverPort: Number(serverPort), users, serverConnections });
  const url = `postgres://${users[0]}@127.0.0.1:${port}/postgres`;
  if (flag("daemon")) {
    execFileSync(pgbouncerBinary(), pgbouncerArgs(ini, true), { stdio: "inherit" });
    await waitForPort(port);
    console.log(
      `pgbouncer (transaction pooling) at ${url}, in front of ${serverHost}:${serverPort}; pid ${runningPid(dir)}, log ${join(dir, "pgbouncer.log")}`,
    );
    return 0;
  }
  const child = spawn(pgbouncerBinary(), pgbouncerArgs(ini, false), { stdio: "inherit" });
  // Ctrl-C: stop at once (PgBouncer's own SIGINT waits for every client to leave).
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill("SIGTERM"));
  void waitForPort(port).then(
    () => console.log(`pgbouncer (transaction pooling) at ${url}, in front of ${serverHost}:${serverPort}; Ctrl-C stops it`),
    () => {},
  );
  return new Promise((done) => child.once("exit", (code) => done(code ?? 0)));
}

process.exit(await main());
