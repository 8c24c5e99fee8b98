import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:http";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freshDatabase, NEEDS_PG, onRealPostgres, type TestDatabase } from "../support/db.js";
import { serviceProcessArgs } from "../support/service-build.js";

/**
 * `npm start` with API_PROCESSES / WORKER_PROCESSES: one supervising process forks API processes
 * that share one port, and worker processes; it replaces a process that dies and stops them all on SIGTERM.
 */
let db: TestDatabase | undefined;
let proc: ChildProcessWithoutNullStreams | undefined;
let dir: string | undefined;
const pids = new Set<number>();
afterEach(async () => {
  proc?.kill("SIGKILL");
  for (const pid of pids) if (alive(pid)) process.kill(pid, "SIGKILL");
  pids.clear();
  await db?.destroy();
  db = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** GET on a new connection each time (so the supervisor hands each to the next API process). */
function get(port: number, path: string, key?: string): Promise<{ status: number; pid: number | undefined }> {
  return new Promise((resolve, reject) => {
    const headers = key ? { authorization: `Bearer ${key}` } : {};
    const req = request({ host: "127.0.0.1", port, path, agent: false, headers }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, pid: Number(res.headers["x-process-id"]) || undefined }));
    });
    req.on("error", reject);
    req.end();
  });
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

function spawnService(env: Record<string, string>) {
  const base = { ...process.env };
  delete base.ADMIN_API_KEY;
  delete base.WEBHOOK_SECRETS_KEY;
  delete base.DATABASE_URL;
  const p = spawn(process.execPath, serviceProcessArgs("src/main.ts"), { env: { ...base, LOG_LEVEL: "info", ...env } });
  proc = p;
  const lines: string[] = [];
  let buffer = "";
  const onData = (chunk: Buffer) => {
    buffer += chunk.toString();
    const parts = buffer.split("\n");
    buffer = parts.pop()!;
    lines.push(...parts);
  };
  p.stdout.on("data", onData);
  p.stderr.on("data", onData);
  const exited = new Promise<number | null>((resolve) => p.on("close", (code) => resolve(code)));
  return { lines, exited };
}

/** Waits (bounded) until `count` lines match; returns them parsed. */
async function waitForLines(lines: string[], pattern: RegExp, count: number, ms = 120_000) {
  for (const until = Date.now() + ms; Date.now() < until; await sleep(100)) {
    const hits = lines.filter((l) => pattern.test(l));
    if (hits.length >= count) return hits.map((l) => JSON.parse(l) as Record<string, unknown>);
  }
  throw new Error(`waited for ${count} lines matching ${pattern}:\n${lines.join("\n")}`);
}

describe("several processes behind one address", () => {
  it("refuses API_PROCESSES above 1 on the embedded PGlite database, saying why", async () => {
    const { lines, exited } = spawnService({ PGLITE_DATA_DIR: "memory://", API_PROCESSES: "2", PORT: "0" });
    expect(await exited).toBe(1);
    expect(lines.join("\n")).toMatch(/API_PROCESSES=2.*several processes need PostgreSQL \(DATABASE_URL\).*PGlite.*one process only/);
  });

  it.skipIf(!onRealPostgres)(
    `serves from two API processes on one port and a read process on READ_PORT, replaces one killed, and stops all on SIGTERM ${NEEDS_PG}`,
    async () => {
      db = await freshDatabase();
      dir = mkdtempSync(join(tmpdir(), "ledger-cluster-"));
      const [port, readPort] = [await freePort(), await freePort()];
      const adminFile = join(dir, "admin-api-key");
      const { lines, exited } = spawnService({
        DATABASE_URL: db.env.DATABASE_URL!,
        DB_POOL_SIZE: "3",
        PORT: String(port),
        API_PROCESSES: "2",
        WORKER_PROCESSES: "1",
        READ_PROCESSES: "1",
        READ_PORT: String(readPort),
        ADMIN_API_KEY_FILE: adminFile,
        WEBHOOK_SECRETS_KEY_FILE: join(dir, "webhook-key"),
      });
      const started = await waitForLines(lines, /"msg":"started (api|read|worker) process/, 4);
      for (const s of started) pids.add(s.pid as number);
      await waitForLines(lines, /"msg":"(api|read|worker) process \d ready"/, 4);
      // The supervisor created the key file once, before forking: every process reads the same key.
      const key = readFileSync(adminFile, "utf8").trim();

      const seen = new Set<number>();
      for (let i = 0; i < 40 && seen.size < 2; i++) seen.add((await get(port, "/healthz")).pid!);
      for (let i = 0; i < 4; i++) expect((await get(port, "/v1/assets", key)).status).toBe(200); // on both processes, with the file's key
      const apiPids = started.filter((s) => String(s.process).startsWith("api-")).map((s) => s.pid as number);
      expect([...seen].sort()).toEqual([...apiPids].sort());
      // READ_PORT is served by the read process alone.
      const readPid = started.find((s) => s.process === "read-1")!.pid as number;
      for (let i = 0; i < 3; i++) expect(await get(readPort, "/healthz")).toEqual({ status: 200, pid: readPid });
      expect((await get(readPort, "/v1/assets", key)).status).toBe(200);

      const [victim, survivor] = apiPids as [number, number];
      process.kill(victim, "SIGKILL");
      await waitForLines(lines, /"msg":"api process \d died: restarting it"/, 1, 10_000);
      // The address keeps answering (the survivor) while the dead one is replaced.
      const during = new Set<number>();
      for (let i = 0; i < 10; i++) during.add((await get(port, "/healthz")).pid!);
      expect([...during]).toEqual([survivor]);
      const restarted = (await waitForLines(lines, /"msg":"started api process/, 3)).at(-1)!;
      const replacement = restarted.pid as number;
      pids.add(replacement);
      expect(replacement).not.toBe(victim);
      await waitForLines(lines, /"msg":"api process \d ready"/, 3);
      const after = new Set<number>();
      for (let i = 0; i < 40 && after.size < 2; i++) after.add((await get(port, "/healthz")).pid!);
      expect([...after].sort()).toEqual([survivor, replacement].sort());

      proc!.kill("SIGTERM");
      // A service manager may signal the whole group: each process then gets SIGTERM twice (from it
      // and from the supervisor) and still drains once.
      for (const pid of [survivor, replacement, readPid]) process.kill(pid, "SIGTERM");
      expect(await exited).toBe(0);
      expect(lines.filter((l) => l.includes('"msg":"stopped"'))).toHaveLength(3); // both API processes and the read process drained
      expect(lines.some((l) => l.includes('"msg":"stopping workers"'))).toBe(true);
      expect(lines.some((l) => l.includes('"msg":"all processes stopped"'))).toBe(true);
      for (const pid of pids) expect(alive(pid)).toBe(false);
      expect(lines.join("\n")).not.toContain(key);
    },
    240_000,
  );
});
