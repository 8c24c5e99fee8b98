import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createServer, type AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/client.js";
import { freshDatabase, testPooler, type TestDatabase } from "../support/db.js";
import { serviceProcessArgs } from "../support/service-build.js";

/**
 * The service as a user runs it: `npm start`'s entry point in its own process, on a real socket.
 */
const ADMIN = "server-test-admin-key-0123456789";
let db: TestDatabase | undefined;
let proc: ChildProcessWithoutNullStreams | undefined;
afterEach(async () => {
  proc?.kill("SIGKILL");
  await db?.destroy();
});

async function start(env: Record<string, string>): Promise<{ url: string; lines: string[]; exited: Promise<number | null> }> {
  const p = spawn(process.execPath, serviceProcessArgs("src/main.ts"), { env: { ...process.env, PORT: "0", LOG_LEVEL: "info", ...env } });
  proc = p;
  const lines: string[] = [];
  let buffer = "";
  const exited = new Promise<number | null>((resolve) => p.on("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString();
      const parts = buffer.split("\n");
      buffer = parts.pop()!;
      for (const line of parts) {
        lines.push(line);
        const m = /"msg":"listening on (http:\/\/[^"]+)/.exec(line);
        if (m) resolve(m[1]!);
      }
    };
    p.stdout.on("data", onData);
    p.stderr.on("data", onData);
    void exited.then((code) => reject(new Error(`exited with ${code}: ${lines.join("\n")}`)));
  });
  return { url, lines, exited };
}

async function onDiskDatabase(): Promise<TestDatabase> {
  db = await freshDatabase({ onDisk: true });
  await db.close(); // the server opens it itself (PGlite allows one process)
  return db;
}

describe("the service process", () => {
  it("a port already in use ends it with one line saying so and what to change, not a stack trace", async () => {
    const { env } = await onDiskDatabase();
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const port = (holder.address() as AddressInfo).port;
    try {
      const p = spawn(process.execPath, serviceProcessArgs("src/main.ts"), { env: { ...process.env, ...env, ADMIN_API_KEY: ADMIN, PORT: String(port) } });
      proc = p;
      let out = "";
      p.stdout.on("data", (c: Buffer) => (out += c.toString()));
      p.stderr.on("data", (c: Buffer) => (out += c.toString()));
      // "close": the process has exited and its output has been read to the end.
      const code = await new Promise<number | null>((resolve) => p.on("close", (c) => resolve(c)));
      expect(code).toBe(1);
      const lines = out.split("\n").filter((l) => l.trim() !== "");
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({
        level: 60,
        code: "EADDRINUSE",
        port,
        msg: expect.stringContaining(`port ${port} on 127.0.0.1 is already in use`),
      });
      expect(lines[0]).toMatch(/set PORT to a free port/);
    } finally {
      holder.close();
    }
  });

  it.skipIf(process.env.TEST_DATABASE_URL !== undefined)("keeps a second process off its embedded database [PGlite only]", async () => {
    const { env } = await onDiskDatabase();
    const server = await start({ ...env, ADMIN_API_KEY: ADMIN });
    const verify = spawn(process.execPath, serviceProcessArgs("src/verify-cli.ts"), { env: { ...process.env, ...env } });
    let out = "";
    verify.stderr.on("data", (c: Buffer) => (out += c.toString()));
    expect(await new Promise((resolve) => verify.on("exit", resolve))).toBe(1);
    expect(out).toMatch(/is in use by process \d+: stop it first/);
    proc!.kill("SIGTERM");
    expect(await server.exited).toBe(0);
    // Once the service has stopped, the folder is free again.
    const after = spawn(process.execPath, serviceProcessArgs("src/verify-cli.ts"), { env: { ...process.env, ...env } });
    expect(await new Promise((resolve) => after.on("exit", resolve))).toBe(0);
  });

  it("refuses to start on bad configuration, naming each bad variable", async () => {
    const p = spawn(process.execPath, serviceProcessArgs("src/main.ts"), {
      env: { ...process.env, PORT: "eighty", ADMIN_API_KEY: "short", DATABASE_URL: "mysql://x" },
    });
    let out = "";
    p.stderr.on("data", (c: Buffer) => (out += c.toString()));
    const code = await new Promise((resolve) => p.on("exit", resolve));
    expect(code).toBe(1);
    expect(out).toMatch(/PORT/);
    expect(out).toMatch(/ADMIN_API_KEY: must be at least 24 characters/);
    expect(out).toMatch(/DATABASE_URL: must be a postgres/);
  });

  it("logs one JSON line per request with its id and no secret, and drains requests in flight on SIGTERM", async () => {
    const { env } = await onDiskDatabase();
    const server = await start({ ...env, ADMIN_API_KEY: ADMIN });
    const h = { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" };
    const post = async (path: string, body: unknown) => {
      const res = await fetch(server.url + path, { method: "POST", headers: { ...h, "idempotency-key": randomUUID() }, body: JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as any, requestId: res.headers.get("x-request-id"), keepAlive: res.headers.get("keep-alive") }; // eslint-disable-line @typescript-eslint/no-explicit-any
    };
    const asset = await post("/v1/assets", { code: "USDC", scale: 6, settlement: { kind: "offchain" } });
    // Idle connections are kept longer than clients keep theirs (HTTP_KEEP_ALIVE_MS), so the client
    // closes them, never the service while the client reuses one.
    expect(asset.keepAlive).toBe("timeout=65");
    const a = await post("/v1/accounts", { asset_id: asset.body.id, code: "equity", normal_side: "debit" });
    const b = await post("/v1/accounts", { asset_id: asset.body.id, code: "wallet", normal_side: "credit" });
    expect([asset.status, a.status, b.status]).toEqual([201, 201, 201]);

    // 40 transfers in flight when SIGTERM arrives: every one is answered and recorded.
    const inflight = Array.from({ length: 40 }, () =>
      post("/v1/transfers", { legs: [{ debit_account_id: a.body.id, credit_account_id: b.body.id, amount: "1" }] }),
    );
    await new Promise((r) => setTimeout(r, 30));
    proc!.kill("SIGTERM");
    const answers = await Promise.allSettled(inflight);
    const ok = answers.filter((x) => x.status === "fulfilled" && x.value.status === 201).length;
    expect(await server.exited).toBe(0);
    expect(server.lines.some((l) => l.includes('"msg":"stopped"'))).toBe(true);

    const reopened = await openDatabase({ url: env.DATABASE_URL, dataDir: env.PGLITE_DATA_DIR, pooler: testPooler });
    const [row] = await reopened.query<{ n: string }>("select count(*)::text as n from transfers");
    await reopened.close();
    expect(Number(row!.n)).toBe(ok); // every acknowledged transfer is there, and nothing else

    const requestLines = server.lines.filter((l) => l.includes('"msg":"request"')).map((l) => JSON.parse(l));
    expect(requestLines.length).toBeGreaterThanOrEqual(3);
    expect(requestLines.find((l) => l.request_id === asset.requestId)).toMatchObject({ method: "POST", route: "/v1/assets", status: 201 });
    expect(server.lines.join("\n")).not.toContain(ADMIN);
  });

  it("with MANAGEMENT_PORT, serves the management surface on a second listener on loopback and only the tenants' API on the public one", async () => {
    const { env } = await onDiskDatabase();
    const server = await start({ ...env, ADMIN_API_KEY: ADMIN, MANAGEMENT_PORT: "0", RUN_WORKERS: "false" });
    let managementUrl: string | undefined;
    for (let i = 0; i < 200 && !managementUrl; i++) {
      managementUrl = server.lines.map((l) => /"msg":"management listening on (http:\/\/[^"]+)/.exec(l)?.[1]).find(Boolean);
      if (!managementUrl) await new Promise((r) => setTimeout(r, 25));
    }
    expect(managementUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const admin = { authorization: `Bearer ${ADMIN}` };
    expect((await fetch(`${server.url}/v1/assets`, { headers: admin })).status).toBe(403);
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${managementUrl}/v1/assets`, { headers: admin })).status).toBe(200);
    expect((await fetch(`${managementUrl}/metrics`)).status).toBe(200);
    proc!.kill("SIGTERM");
    expect(await server.exited).toBe(0);
  });
});
