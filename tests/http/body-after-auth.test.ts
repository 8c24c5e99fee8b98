import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveOnLoopback, worldPerFile } from "../support/http.js";

/**
 * Bodies over a socket are read only once the request is let through: after the API key, the rate
 * limit and the role (src/http/middleware/body-limit.ts), and for a usage batch after its admission
 * (src/http/batch-admission.ts), which counts its declared Content-Length. So a request without a
 * valid key, or with a wrong role, is answered as soon as its headers are in, however large the body
 * it declares; and a body that does not arrive within BODY_READ_TIMEOUT_MS is answered 408 and its
 * connection closed. Real bytes over a loopback socket, as Node serves the service.
 */
const DEADLINE_MS = 600;
const t = worldPerFile({ config: { BODY_READ_TIMEOUT_MS: DEADLINE_MS, BATCH_BODIES_IN_FLIGHT_BYTES: 1024 } });
let served: Awaited<ReturnType<typeof serveOnLoopback>>;
beforeAll(async () => {
  served = await serveOnLoopback(t.api, { keepGlobals: true });
});
afterAll(async () => served.close());

interface Exchange {
  /** The answer's status line, if one came. */
  status: string | undefined;
  /** Everything the server sent. */
  text: string;
  /** The server closed the connection within the wait. */
  closed: boolean;
}

/**
 * Sends a POST's headers (with `content-length: declared`, or chunked when `declared` is
 * "chunked") and then `sent`, which may be only the start of the body; waits for a whole answer,
 * and for the server to close the connection when it says it will (`connection: close`), `waitMs`
 * at most; then hangs up.
 */
function post(path: string, auth: string | undefined, declared: number | "chunked", sent: string, waitMs: number): Promise<Exchange> {
  const { hostname, port } = new URL(served.origin);
  return new Promise((resolve) => {
    let text = "";
    let closed = false;
    const s = connect(Number(port), hostname, () => {
      const length = declared === "chunked" ? "transfer-encoding: chunked" : `content-length: ${declared}`;
      const authorization = auth === undefined ? "" : `authorization: ${auth}\r\n`;
      s.write(
        `POST ${path} HTTP/1.1\r\nhost: ${hostname}\r\n${authorization}content-type: application/json\r\nidempotency-key: k-${Math.random()}\r\n${length}\r\n\r\n${sent}`,
      );
    });
    const done = () => {
      clearTimeout(timer);
      s.destroy();
      resolve({ status: text ? text.split("\r\n")[0] : undefined, text, closed });
    };
    const timer = setTimeout(done, waitMs);
    s.on("data", (d) => {
      text += d.toString();
      if (!answered(text) || /\r\nconnection: close\r\n/i.test(text)) return;
      done();
    });
    s.on("error", () => undefined);
    s.on("end", () => {
      closed = true;
      done();
    });
  });
}

/** A whole answer with its Content-Length is in. */
function answered(text: string): boolean {
  const end = text.indexOf("\r\n\r\n");
  const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))?.[1];
  return end >= 0 && length !== undefined && Buffer.byteLength(text.slice(end + 4)) >= Number(length);
}

const problemOf = (text: string) => JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)) as { code: string; detail: string };

const lastAudit = async () =>
  (
    await t.api.db.query<{ status: number; body_sha256: string | null; body_bytes: number | null }>(
      "select status, body_sha256, body_bytes from audit_log order by id desc limit 1",
    )
  )[0]!;

describe("the socket helper gets answers", () => {
  it("a complete body with no valid key is answered 401", async () => {
    const r = await post("/v1/usage/batch", "Bearer lk_nope_nope", 12, '{"records":[', 1500);
    expect(r.status).toMatch(/ 401 /);
  });
});

describe("a request that will be refused is refused before its body is read", () => {
  it("no valid key: 401 before the (16 MiB) batch body is sent, and the refusal is audited without a body", async () => {
    const r = await post("/v1/usage/batch", "Bearer lk_nope_nope", 16 * 1_048_576, '{"records":[', 1500);
    expect(r.status, "no answer while the body was still expected: the key is checked after the body is read").toMatch(/ 401 /);
    expect(problemOf(r.text).code).toBe("unauthorized");
    expect(await lastAudit()).toMatchObject({ status: 401, body_sha256: null, body_bytes: null });
  });

  it("no key at all, and a chunked body: 401 before it ends", async () => {
    const r = await post("/v1/usage/batch", undefined, "chunked", '10\r\n{"records":[    \r\n', 1500);
    expect(r.status).toMatch(/ 401 /);
  });

  it("a wrong role: 403 before the body is read", async () => {
    const r = await post("/v1/api-keys", `Bearer ${t.w.keys.m1}`, 500_000, '{"name":', 1500);
    expect(r.status, "no answer while the body was still expected").toMatch(/ 403 /);
    expect(problemOf(r.text).code).toBe("forbidden");
  });

  it("a declared length over the limit is still refused 413 at once, before the key", async () => {
    const r = await post("/v1/customers", "Bearer lk_nope_nope", 1_048_577, "{", 1500);
    expect(r.status).toMatch(/ 413 /);
  });
});

describe("a body that does not arrive in time", () => {
  it("is answered 408 problem+json once BODY_READ_TIMEOUT_MS has passed, the connection is closed and nothing is written", async () => {
    const started = Date.now();
    const r = await post("/v1/customers", `Bearer ${t.w.keys.m1}`, 1000, '{"id": "slow-1"', DEADLINE_MS + 3000);
    expect(r.status).toMatch(/ 408 /);
    expect(r.text.toLowerCase()).toContain("content-type: application/problem+json");
    expect(r.text.toLowerCase()).toContain("connection: close");
    expect(problemOf(r.text)).toMatchObject({ code: "request_timeout" });
    expect(r.closed, "the server keeps the connection of a body that did not arrive").toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    expect(await t.api.db.query("select 1 from customers where id = 'slow-1'")).toEqual([]);
  });

  it("a chunked body too: 408 when its end does not come", async () => {
    const r = await post("/v1/customers", `Bearer ${t.w.keys.m1}`, "chunked", '5\r\n{"id"\r\n', DEADLINE_MS + 3000);
    expect(r.status).toMatch(/ 408 /);
    expect(r.closed).toBe(true);
  });

  it("a usage batch that stalls holds the admission budget only until its deadline: the next batch is then taken", async () => {
    // The budget (1024 bytes) holds one batch: the stalled one is admitted, then its body is awaited.
    const stalled = post("/v1/usage/batch", `Bearer ${t.w.keys.m1}`, 100_000, '{"records":[', DEADLINE_MS + 3000);
    await new Promise((r) => setTimeout(r, 100));
    const body = JSON.stringify({ records: [t.w.usage("after-stall")] });
    const next = post("/v1/usage/batch", `Bearer ${t.w.keys.m1}`, Buffer.byteLength(body), body, DEADLINE_MS + 3000);
    const first = await stalled;
    expect(first.status).toMatch(/ 408 /);
    const second = await next;
    expect(second.status, second.text).toMatch(/ 200 /);
  });

  it("a key that may not post usage is refused 403 at once, without waiting for (or taking) the batch budget", async () => {
    // A marketplace's stalled batch holds the whole budget (1024 bytes) until its deadline.
    const stalled = post("/v1/usage/batch", `Bearer ${t.w.keys.m1}`, 100_000, '{"records":[', DEADLINE_MS + 3000);
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    const body = JSON.stringify({ records: [t.w.usage("operator-batch")] });
    const operator = await post("/v1/usage/batch", `Bearer ${t.w.keys.o1}`, Buffer.byteLength(body), body, DEADLINE_MS + 3000);
    const waited = Date.now() - started;
    expect(operator.status).toMatch(/ 403 /);
    expect(problemOf(operator.text).code).toBe("forbidden");
    expect(waited, "the operator's batch waited in the admission queue behind the stalled batch").toBeLessThan(DEADLINE_MS / 2);
    expect((await stalled).status).toMatch(/ 408 /);
  });

  it("a body that arrives in time, slowly, is read whole", async () => {
    const body = JSON.stringify({ id: "slow-ok", billing: "prepaid" });
    const { hostname, port } = new URL(served.origin);
    const status = await new Promise<string | undefined>((resolve) => {
      let text = "";
      const s = connect(Number(port), hostname, () => {
        s.write(
          `POST /v1/customers HTTP/1.1\r\nhost: ${hostname}\r\nauthorization: Bearer ${t.w.keys.m1}\r\ncontent-type: application/json\r\nidempotency-key: slow-ok\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
        );
        setTimeout(() => s.write(body.slice(10)), DEADLINE_MS / 3);
      });
      const timer = setTimeout(() => {
        s.destroy();
        resolve(text ? text.split("\r\n")[0] : undefined);
      }, DEADLINE_MS + 3000);
      s.on("data", (d) => {
        text += d.toString();
        if (text.includes("\r\n\r\n")) {
          clearTimeout(timer);
          s.destroy();
          resolve(text.split("\r\n")[0]);
        }
      });
      s.on("error", () => undefined);
    });
    expect(status).toMatch(/ 201 /);
  });
});
