import type { MiddlewareHandler } from "hono";
import { uuidv7 } from "../../domain/ids.js";
import type { AppDeps, AppEnv } from "../request-context.js";

/**
 * Request id, one log line and metrics per request. The service makes every request id (unique);
 * the client's own X-Request-Id is kept beside it. Also hands the app's dependencies to the request.
 */
export function requestLog(deps: AppDeps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const incoming = c.req.header("x-request-id");
    const requestId = uuidv7();
    c.set("requestId", requestId);
    c.set("clientRequestId", incoming !== undefined && /^[\x21-\x7e]{1,100}$/.test(incoming) ? incoming : null);
    c.set("deps", deps);
    const started = performance.now();
    await next();
    c.res.headers.set("x-request-id", requestId);
    // Every answer under /v1 carries tenant data or a secret (a new API key): never stored by a cache.
    if (c.req.path.startsWith("/v1/")) c.res.headers.set("cache-control", "no-store");
    // A HEAD is answered from the GET route's response, which Node's adapter rebuilds from the
    // headers it was created with: a response of its own carries the ones set here too.
    if (c.req.method === "HEAD") c.res = new Response(null, { status: c.res.status, headers: c.res.headers });
    const ms = performance.now() - started;
    const route = c.req.routePath ?? "unmatched";
    const status = c.res.status;
    deps.metrics.httpRequests.inc({ method: c.req.method, route, status: String(status) });
    deps.metrics.httpDuration.observe({ method: c.req.method, route }, ms / 1000);
    if (route === "/healthz" || route === "/metrics") return;
    const line = {
      request_id: requestId,
      client_request_id: c.var.clientRequestId ?? undefined,
      method: c.req.method,
      path: c.req.path,
      route,
      status,
      ms: Math.round(ms * 10) / 10,
      key_id: c.var.principal?.keyId,
    };
    if (status >= 500) deps.log.error(line, "request failed");
    else deps.log.info(line, "request");
  };
}
