import type { IncomingMessage } from "node:http";
import type { Context, MiddlewareHandler } from "hono";
import { ApiError } from "../problem.js";
import type { AppDeps, AppEnv } from "../request-context.js";

/**
 * Bodies: bounded in size and in time here; JSON-only and well-formed per route (json-body.ts).
 * Usage batches (up to 10,000 records) get a larger limit than every other body.
 *
 * A declared Content-Length over the limit is refused at once (413), before the API key: it needs
 * no body. The body itself is read only when something asks for it (`c.req.arrayBuffer()`: the
 * JSON guard, after the key, the rate limit, the role and, for a usage batch, its admission), so a
 * request refused before that is answered as soon as its headers are in, and its body, never read,
 * is dropped as it comes (@hono/node-server drains it after the answer: half a second at most, then
 * it closes the connection).
 * While it is read the body is counted (413 as soon as it passes the limit, with a length or
 * chunked) and timed: one that has not arrived `BODY_READ_TIMEOUT_MS` after its reading began is
 * answered 408 and its connection closed.
 *
 * Served by Node (@hono/node-server), the body is read straight from Node's request stream into
 * the request's body cache. Reading it through the web `Request` made Node's request into a web one
 * with a body stream and an abort signal first: a quarter of the service's CPU per single record,
 * measured (docs/performance.md). Elsewhere (`app.request` in tests) it is read from the web
 * `Request`'s stream, bounded in size the same way (a body made in the process has no wait).
 */
export function bodyLimits(config: AppDeps["config"]): MiddlewareHandler<AppEnv> {
  const limitFor = (max: number): MiddlewareHandler<AppEnv> => {
    const tooLarge = () => new ApiError("payload_too_large", `the body is larger than ${max} bytes`);
    const timeoutMs = config.BODY_READ_TIMEOUT_MS;
    return async (c, next) => {
      // A GET or HEAD has no body for the routes (a web Request of either never carries one).
      if (c.req.method === "GET" || c.req.method === "HEAD") return next();
      const declared = c.req.header("content-length");
      if (declared !== undefined && Number(declared) > max) throw tooLarge();
      const incoming = nodeRequestOf(c);
      const read = async (): Promise<ArrayBuffer> => {
        const body = incoming !== undefined ? await readBounded(incoming, max, timeoutMs) : await readWebBounded(c.req.raw, max);
        if (body === "too_large") throw tooLarge();
        return body;
      };
      let reading: Promise<ArrayBuffer> | undefined;
      // Hono keeps promises in its body cache (its type says values): arrayBuffer(), text() and
      // json() all answer from this entry, which starts reading the body when first asked for.
      Object.defineProperty(c.req.bodyCache, "arrayBuffer", {
        configurable: true,
        enumerable: true,
        get: () => (reading ??= read()),
      });
      reads.set(c.req, () => reading);
      return next();
    };
  };
  const batchLimit = limitFor(config.MAX_BATCH_BODY_BYTES);
  const defaultLimit = limitFor(config.MAX_BODY_BYTES);
  return (c, next) => (c.req.path === "/v1/usage/batch" ? batchLimit(c, next) : defaultLimit(c, next));
}

/** Per request, the reading of its body once begun (by request, for the audit row). */
const reads = new WeakMap<object, () => Promise<ArrayBuffer> | undefined>();

/**
 * The request's body if it was read (or is being read) for the answer, or if it declares none;
 * undefined for a body nothing read (a request refused before it), which is then not waited for.
 */
export function bodyIfRead(c: Context<AppEnv>): Promise<ArrayBuffer> | undefined {
  const reading = reads.get(c.req)?.();
  if (reading !== undefined) return reading;
  const length = c.req.header("content-length");
  const declaresBody = (length !== undefined && length !== "0") || c.req.header("transfer-encoding") !== undefined;
  return declaresBody ? undefined : c.req.arrayBuffer();
}

/** Node's request behind the context when @hono/node-server serves it (its `env.incoming`). */
function nodeRequestOf(c: Context<AppEnv>): IncomingMessage | undefined {
  const env = c.env as { incoming?: unknown } | undefined;
  const incoming = env?.incoming;
  return incoming !== null && typeof incoming === "object" && "on" in incoming && "headers" in incoming ? (incoming as IncomingMessage) : undefined;
}

/**
 * The request's bytes, or "too_large" as soon as they pass `max` (what is left is then dropped as
 * it comes: Node drains an unread body once the answer is sent). A request whose client goes away
 * before the end is refused, not left waiting; one whose body is not in `timeoutMs` after the
 * reading began is refused 408, with `Connection: close` (Node closes the connection once the
 * answer is sent).
 */
function readBounded(incoming: IncomingMessage, max: number, timeoutMs: number): Promise<ArrayBuffer | "too_large"> {
  if (incoming.readableEnded) return Promise.resolve(new ArrayBuffer(0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (outcome: () => void) => {
      clearTimeout(timer);
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      incoming.off("error", onError);
      incoming.off("close", onClose);
      outcome();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > max) settle(() => resolve("too_large"));
      else chunks.push(chunk);
    };
    const onEnd = () =>
      settle(() => {
        const all = Buffer.concat(chunks, size);
        // A small Buffer may sit in Node's shared pool: the body gets an ArrayBuffer of its own.
        resolve(all.byteOffset === 0 && all.buffer.byteLength === size ? (all.buffer as ArrayBuffer) : new Uint8Array(all).buffer);
      });
    const onError = (err: Error) => settle(() => reject(err));
    const onClose = () => settle(() => reject(new ApiError("invalid_request", "the request's body ended before its end (the client went away)")));
    const onTimeout = () =>
      settle(() => {
        chunks.length = 0;
        reject(
          new ApiError("request_timeout", `the body did not arrive within ${timeoutMs} ms (${size} bytes came); send it again, whole`, [], {
            connection: "close",
          }),
        );
      });
    const timer = setTimeout(onTimeout, timeoutMs);
    incoming.on("data", onData);
    incoming.once("end", onEnd);
    incoming.once("error", onError);
    incoming.once("close", onClose);
  });
}

/** The bytes of a web Request's body, or "too_large" as soon as they pass `max`. */
async function readWebBounded(request: Request, max: number): Promise<ArrayBuffer | "too_large"> {
  if (request.body === null) return new ArrayBuffer(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      return "too_large";
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  return all.buffer;
}
