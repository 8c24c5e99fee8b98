import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveOnLoopback, worldPerFile } from "../support/http.js";

/**
 * HEAD as Node serves it: Hono answers a HEAD with the GET route's headers and no body, rebuilding
 * the answer over a socket; the headers the service sets after the route (the request id, no-store)
 * must survive that, as they do on the GET.
 */
const t = worldPerFile();
let served: Awaited<ReturnType<typeof serveOnLoopback>>;
beforeAll(async () => {
  served = await serveOnLoopback(t.api);
});
afterAll(async () => served.close());

function headersOf(method: "GET" | "HEAD", path: string, key: string): Promise<{ status: number; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, served.origin), { method, headers: { authorization: `Bearer ${key}` } }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("HEAD under /v1", () => {
  it("answers the GET's status and headers: a request id and Cache-Control: no-store", async () => {
    const get = await headersOf("GET", "/v1/assets", t.w.keys.m1);
    const head = await headersOf("HEAD", "/v1/assets", t.w.keys.m1);
    expect(get.status).toBe(200);
    expect(head.status).toBe(200);
    expect(head.headers["cache-control"]).toBe("no-store");
    expect(head.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(head.headers["content-type"]).toBe(get.headers["content-type"]);
  });
  it("a refused HEAD keeps its problem's headers", async () => {
    const head = await headersOf("HEAD", "/v1/assets", "lk_nobody_0000000000000000");
    expect(head.status).toBe(401);
    expect(head.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(head.headers["cache-control"]).toBe("no-store");
    expect(head.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
  });
});
