/**
 * PostgreSQL unreachable behind PgBouncer (transaction mode), as while it restarts. PgBouncer accepts
 * a client's login without a server connection. The driver's first statement on a new connection is
 * its read of the array types, and its promise is left unhandled. So when PgBouncer answers that
 * read with `08P01 server login has been failing`, the driver alone ends the process. The service's
 * processes must instead answer 503 and carry on (src/db/driver-guard.ts).
 *
 * Starts a PgBouncer of its own in front of a TCP proxy to the server of TEST_DATABASE_URL, so that
 * the server can be cut off without touching it. Runs with TEST_POOLER_URL (CI installs PgBouncer),
 * skipped without it.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "../../src/db/client.js";
import { freePort } from "../../scripts/anvil-chain.js";
import { PgBouncerChild } from "../../scripts/pgbouncer-server.js";
import { TcpProxy } from "../support/tcp-proxy.js";

const serverUrl = process.env.TEST_DATABASE_URL;
const enabled = Boolean(process.env.TEST_POOLER_URL && serverUrl);
const NEEDS_POOLER = "[needs PgBouncer and PostgreSQL: runs only with TEST_POOLER_URL and TEST_DATABASE_URL]";

let proxy: TcpProxy;
let bouncer: PgBouncerChild;
let dir: string;
let url: string;
/** A connection that waits in PgBouncer's queue while the server is away (the first client always does). */
let waiting: Database;
let waitingQuery: Promise<unknown>;

function runChild(mode: "driver" | "service"): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "../support/driver-type-read-child.ts"), url, mode], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  return new Promise((resolve) =>
    child.once("close", (status) => {
      clearTimeout(killer);
      resolve({ status, stdout, stderr });
    }),
  );
}

describe.skipIf(!enabled)(`PostgreSQL unreachable behind PgBouncer ${NEEDS_POOLER}`, () => {
  beforeAll(async () => {
    const server = new URL(serverUrl!);
    proxy = new TcpProxy(await freePort(), Number(server.port || 5432));
    await proxy.up();
    dir = mkdtempSync(join(tmpdir(), "ledger-pooler-down-"));
    bouncer = await PgBouncerChild.start({
      dir,
      port: await freePort(),
      serverHost: "127.0.0.1",
      serverPort: proxy.port,
      users: ["postgres"],
      serverConnections: 4,
    });
    const via = new URL(bouncer.via(serverUrl!));
    via.pathname = "/postgres";
    url = via.toString();
    // One login while the server is up: PgBouncer keeps the server's welcome and from then on
    // accepts logins without a server connection.
    const sql = postgres(url, { max: 1, prepare: false, onnotice: () => {} });
    await sql.unsafe("select 1");
    await sql.end({ timeout: 1 });
    await proxy.down();
    // The first client after the server went away waits in PgBouncer's queue (until the server is
    // back); the clients after it are refused at once with 08P01.
    waiting = await openDatabase({ url, pooler: "transaction", maxConnections: 1 });
    waitingQuery = waiting.query<{ ok: number }>("select 1 as ok");
    waitingQuery.catch(() => {});
    await new Promise((r) => setTimeout(r, 1500));
  });
  afterAll(async () => {
    await proxy?.up();
    await waiting?.close().catch(() => {});
    await bouncer?.stop();
    await proxy?.down();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("the driver alone ends the process on the failed type read (why the guard exists)", async () => {
    const r = await runChild("driver");
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("server login has been failing");
    expect(r.stdout).not.toContain('"exited":"normally"');
  });

  it("through the service's openDatabase the query fails as 'database unavailable' (08P01, a 503) and the process carries on", async () => {
    const r = await runChild("service");
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ failed: true, code: "08P01", unavailable: true });
    expect(lines.at(-1)).toEqual({ exited: "normally" });
    expect(r.stderr).toContain("type read failed (08P01");
  });

  it("when the server is back, the waiting connection is served and new ones work", async () => {
    await proxy.up();
    expect(await waitingQuery).toEqual([{ ok: 1 }]);
    const db = await openDatabase({ url, pooler: "transaction", maxConnections: 2 });
    try {
      // PgBouncer retries the server after server_login_retry (1 s): a bounded wait for it.
      let rows: unknown;
      for (let i = 0; i < 50 && rows === undefined; i++) {
        rows = await db.query("select 2 as ok").catch(async () => void (await new Promise((r) => setTimeout(r, 200))));
      }
      expect(rows).toEqual([{ ok: 2 }]);
    } finally {
      await db.close();
    }
  });
});
