import type { ErrorHandler, Hono, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { BaseError } from "viem";
import { isRpcUnavailable as isChainUnavailable } from "../../chain/evm.js";
import { LedgerError, WriteContended } from "../../domain/errors.js";
import { isDatabaseUnavailable } from "../../services/context.js";
import { ApiError, problemResponse } from "../problem.js";
import type { AppDeps, AppEnv } from "../request-context.js";

/**
 * No route for the method and path: a 405 naming the methods the path takes (and an `Allow`
 * header), or a 404 when no route has the path.
 */
export function notFound(app: Hono<AppEnv>): NotFoundHandler<AppEnv> {
  let routes: { method: string; pattern: RegExp }[] | undefined;
  return (c) => {
    routes ??= app.routes
      .filter((r) => r.method !== "ALL" && !r.path.includes("*"))
      .map((r) => ({ method: r.method, pattern: new RegExp(`^${r.path.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/:\w+/g, "[^/]+")}$`) }));
    const allowed = [...new Set(routes.filter((r) => r.pattern.test(c.req.path)).map((r) => r.method))].sort();
    if (allowed.length > 0) {
      return problemResponse(
        c,
        new ApiError("method_not_allowed", `${c.req.path} takes ${allowed.join(", ")}, not ${c.req.method}`, [], { allow: allowed.join(", ") }),
      );
    }
    // A trailing slash is the usual slip: name the path that exists.
    const bare = c.req.path.replace(/\/+$/, "");
    if (bare !== c.req.path && bare !== "" && routes.some((r) => r.pattern.test(bare))) {
      return problemResponse(c, new ApiError("not_found", `no route for ${c.req.method} ${c.req.path}: paths take no trailing slash (${bare})`));
    }
    return problemResponse(c, new ApiError("not_found", `no route for ${c.req.method} ${c.req.path}`));
  };
}

/**
 * Every error thrown while answering, as problem+json: the API's and the ledger's own errors as
 * they are, Hono's client errors by status, an unreachable chain node or database as a retryable
 * 503, anything else as a 500 quoting the request id (logged without secrets).
 */
export function errorHandler(deps: AppDeps): ErrorHandler<AppEnv> {
  return (err, c) => {
    if (err instanceof ApiError || err instanceof LedgerError) return problemResponse(c, err);
    if (err instanceof HTTPException && err.status === 400 && /JSON/i.test(err.message)) {
      // The validator could not read a JSON body: json-body.ts names what is wrong with a body it
      // saw; what reaches here is a body that is empty or missing.
      return problemResponse(c, new ApiError("malformed_json", "the body is empty: this operation takes a JSON object"));
    }
    if (err instanceof HTTPException && err.status < 500) {
      const code = err.status === 413 ? "payload_too_large" : err.status === 415 ? "unsupported_media_type" : "invalid_request";
      return problemResponse(c, new ApiError(code, err.message));
    }
    if (err instanceof WriteContended) {
      return problemResponse(c, new ApiError("unavailable", `${err.message}, with the same Idempotency-Key`, [], { "retry-after": "1" }));
    }
    if (isChainUnavailable(err)) {
      // The short message only: a node's URL (which may hold an API key) is in the full text.
      deps.log.warn({ request_id: c.get("requestId"), err: (err as { shortMessage?: string }).shortMessage }, "chain RPC unavailable");
      return problemResponse(c, new ApiError("chain_unavailable", "the chain's RPC node did not answer; retry shortly", [], { "retry-after": "5" }));
    }
    if (isDatabaseUnavailable(err)) {
      deps.log.error({ request_id: c.get("requestId"), err: String(err) }, "database unavailable");
      return problemResponse(
        c,
        new ApiError("unavailable", "the database is unavailable; retry shortly with the same Idempotency-Key", [], { "retry-after": "1" }),
      );
    }
    // viem's errors carry the node's URL (which may hold an API key): their short message only.
    deps.log.error({ request_id: c.get("requestId"), err: err instanceof BaseError ? { name: err.name, message: err.shortMessage } : err }, "unhandled error");
    return problemResponse(c, new ApiError("internal", `an internal error occurred; quote request id ${c.get("requestId")} when reporting it`));
  };
}
