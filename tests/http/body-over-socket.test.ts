import { createHash } from "node:crypto";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveOnLoopback, worldPerFile } from "../support/http.js";

/**
 * Bodies as Node serves them (src/http/middleware/body-limit.ts): read from Node's request stream
 * into the request's body cache, bounded while they arrive. The in-process tests (`app.request`)
 * go through Hono's own limit; these send real bytes over a loopback socket, with a declared length,
 * chunked, too large and cut off.
 */
const t = worldPerFile();
let served: Awaited<ReturnType<typeof serveOnLoopback>>;
beforeAll(async () => {
  served = await serveOnLoopback(t.api, { keepGlobals: true });
});
afterAll(async () => served.close());

interface Sent {
  status: number;
  body: Record<string, unknown> | undefined;
}

/** Sends a request over a socket: the body in one piece with its length, or in chunks (chunked encoding). */
function send(path: string, key: string, body: string | string[], headers: Record<string, string> = {}): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, served.origin);
    const chunked = Array.isArray(body);
    const req = request(
      url,
      {
        method: "POST",
        headers: {
          authorization: `Bearer ${key}`,
          "content-type": "application/json",
          ...(chunked ? { "transfer-encoding": "chunked" } : { "content-length": String(Buffer.byteLength(body)) }),
          ...headers,
        },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on("data", (c: Buffer) => parts.push(c));
        res.on("end", () => {
          const text = Buffer.concat(parts).toString();
          resolve({ status: res.statusCode!, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined });
        });
      },
    );
    req.on("error", reject);
    if (chunked) for (const part of body) req.write(part);
    else req.write(body);
    req.end();
  });
}

const lastAudit = async () =>
  (
    await t.api.db.query<{ body_sha256: string | null; body_bytes: number | null; status: number; path: string }>(
      "select body_sha256, body_bytes, status, path from audit_log order by id desc limit 1",
    )
  )[0]!;

describe("bodies over a socket", () => {
  it("a body with its length and a chunked one are read whole: the change is made and the audit row has the body's hash", async () => {
    const body = JSON.stringify({ id: "sock-1", billing: "prepaid" });
    const created = await send("/v1/customers", t.w.keys.m1, body, { "idempotency-key": "sock-1" });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ id: "sock-1" });
    const audit = await lastAudit();
    expect(audit).toMatchObject({ status: 201, path: "/v1/customers", body_bytes: Buffer.byteLength(body) });
    expect(audit.body_sha256).toBe(createHash("sha256").update(body).digest("hex"));

    const parts = ['{"id": "sock-2",', ' "billing"', ': "prepaid"}'];
    const chunked = await send("/v1/customers", t.w.keys.m1, parts, { "idempotency-key": "sock-2" });
    expect(chunked.status, JSON.stringify(chunked.body)).toBe(201);
    expect((await lastAudit()).body_sha256).toBe(createHash("sha256").update(parts.join("")).digest("hex"));
  });

  it("a body over the limit is refused with 413 naming the limit, declared or chunked, and nothing is written; a usage batch has its larger limit", async () => {
    const customers = async () => (await t.api.db.query<{ n: string }>("select count(*)::text as n from customers"))[0]!.n;
    const before = await customers();
    const big = JSON.stringify({ id: "sock-big", billing: "prepaid", pad: "x".repeat(1_100_000) });
    for (const body of [big, big.match(/.{1,65536}/gs)!]) {
      const r = await send("/v1/customers", t.w.keys.m1, body);
      expect(r.status).toBe(413);
      expect(r.body).toMatchObject({ code: "payload_too_large" });
      expect(String(r.body!.detail)).toContain("1048576 bytes");
    }
    expect(await customers()).toBe(before);
    // The same size to the batch route is read (and then judged on its records, not its size).
    const batch = await send("/v1/usage/batch", t.w.keys.m1, JSON.stringify({ records: [], pad: "x".repeat(1_100_000) }));
    expect(batch.status).not.toBe(413);
    expect(batch.status).toBeLessThan(500);
  });

  it("a malformed body read from the socket is refused as before: 400 malformed_json", async () => {
    const r = await send("/v1/customers", t.w.keys.m1, '{"id": "sock-3", ');
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: "malformed_json" });
  });

  it("a client that goes away in the middle of its body leaves nothing waiting: the next requests are answered", async () => {
    await new Promise<void>((resolve) => {
      const req = request(new URL("/v1/customers", served.origin), {
        method: "POST",
        headers: { authorization: `Bearer ${t.w.keys.m1}`, "content-type": "application/json", "content-length": "1000" },
      });
      req.on("error", () => resolve());
      req.write('{"id": "sock-4"');
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 100);
    });
    const body = JSON.stringify({ id: "sock-5", billing: "prepaid" });
    const next = await send("/v1/customers", t.w.keys.m1, body, { "idempotency-key": "sock-5" });
    expect(next.status).toBe(201);
    expect((await t.api.db.query("select 1 from customers where id = 'sock-4'")).length).toBe(0);
  });
});
