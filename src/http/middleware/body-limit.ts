import type { IncomingMessage } from "node:http";
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { ApiError } from "../problem.js";
import type { AppDeps, AppEnv } from "../request-context.js";

/**
 * Bodies: bounded in size here; JSON-only and well-formed per route (json-body.ts). Usage batches
 * (up to 10,000 records) get a larger limit than every other body.
 *
 * Served by Node (@hono/node-server), the body is read here straight from Node's request stream,
 * counting bytes as they come, into the request's body cache, where `c.req.arrayBuffer()` (the JSON
 * guard, the audit hash) finds it. Reading it through the web `Request` made Node's request into a
 * web one with a body stream and an abort signal first: a quarter of the service's CPU per single
 * record, measured (docs/performance.md). Elsewhere (`app.request` in tests) Hono's own limit reads it.
 */
export function bodyLimits(config: AppDeps["config"]): MiddlewareHandler<AppEnv> {
  const limitFor = (max: number): MiddlewareHandler<AppEnv> => {
    const tooLarge = () => new ApiError("payload_too_large", `the body is larger than ${max} bytes`);
    const web = bodyLimit({
      maxSize: max,
      onError: () => {
        throw tooLarge();
      },
    });
    return async (c, next) => {
      const incoming = nodeRequestOf(c);
      if (incoming === undefined) return web(c, next);
      // A GET or HEAD has no body for the routes (a web Request of either never carries one).
      if (c.req.method === "GET" || c.req.method === "HEAD") return next();
      const declared = c.req.header("content-length");
      if (declared !== undefined && Number(declared) > max) throw tooLarge();
      const body = await readBounded(incoming, max);
      if (body === "too_large") throw tooLarge();
      // Hono keeps promises in its body cache (its type says values): arrayBuffer() answers this one.
      (c.req.bodyCache as { arrayBuffer?: Promise<ArrayBuffer> }).arrayBuffer = Promise.resolve(body);
      return next();
    };
  };
  const batchLimit = limitFor(config.MAX_BATCH_BODY_BYTES);
  const defaultLimit = limitFor(config.MAX_BODY_BYTES);
  return (c, next) => (c.req.path === "/v1/usage/batch" ? batchLimit(c, next) : defaultLimit(c, next));
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
 * before the end is refused, not left waiting.
 */
function readBounded(incoming: IncomingMessage, max: number): Promise<ArrayBuffer | "too_large"> {
  if (incoming.readableEnded) return Promise.resolve(new ArrayBuffer(0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (outcome: () => void) => {
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
    incoming.on("data", onData);
    incoming.once("end", onEnd);
    incoming.once("error", onError);
    incoming.once("close", onClose);
  });
}
