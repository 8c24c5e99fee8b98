import { createHash } from "node:crypto";
import { OpenAPIHono, type z } from "@hono/zod-openapi";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import { routePath } from "hono/route";
import { BaseError } from "viem";
import { isRpcUnavailable as isChainUnavailable } from "../chain/evm.js";
import { LedgerError, type FieldIssue } from "../domain/errors.js";
import { uuidv7 } from "../domain/ids.js";
import { RefusedAuditBudget } from "../services/audit-log.js";
import { isDatabaseUnavailable } from "../services/context.js";
import { registerDocs } from "./docs.js";
import type { AppDeps, AppEnv } from "./request-context.js";
import { ApiError, problemResponse } from "./problem.js";
import { registerRoutes } from "./routes/index.js";

/** The HTTP API: middleware, every route, the OpenAPI document and the docs page. */
export function createApp(deps: AppDeps): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result, c) => {
      if (!result.success) {
        const issues = zodIssues(result.error.issues);
        if (result.target === "header" && issues.some((i) => i.path === "idempotency-key")) {
          return problemResponse(c, new ApiError("idempotency_key_required", "POST requests need an 'Idempotency-Key' header (any unique string up to 255 printable characters, e.g. a UUID)"));
        }
        return problemResponse(c, new ApiError("invalid_request", issues.map((i) => `${i.path}: ${i.message}`).join("; "), issues));
      }
    },
  });

  // Request id, one log line and metrics per request.
  app.use("*", async (c, next) => {
    // The service makes every request id (unique); the client's own id is kept beside it.
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
    const ms = performance.now() - started;
    const route = c.req.routePath ?? "unmatched";
    const status = c.res.status;
    deps.metrics.httpRequests.inc({ method: c.req.method, route, status: String(status) });
    deps.metrics.httpDuration.observe({ method: c.req.method, route }, ms / 1000);
    if (route === "/healthz" || route === "/metrics") return;
    const line = { request_id: requestId, client_request_id: c.var.clientRequestId ?? undefined, method: c.req.method, path: c.req.path, route, status, ms: Math.round(ms * 10) / 10, key_id: c.var.principal?.keyId };
    if (status >= 500) deps.log.error(line, "request failed");
    else deps.log.info(line, "request");
  });

  // The public listener serves the tenants' API and the liveness checks, nothing of the management surface.
  if (deps.surface === "public") {
    app.use("*", async (c, next) => {
      const p = c.req.path;
      if (p === "/metrics" || p === "/openapi.json" || p === "/docs" || p.startsWith("/docs/")) {
        throw new ApiError("not_found", `no route for ${c.req.method} ${p} on this listener (it is on the management listener)`);
      }
      return next();
    });
  }

  // No NUL character anywhere in the URL (PostgreSQL cannot store or compare it): a 400 naming where.
  app.use("*", async (c, next) => {
    if (/%00/.test(c.req.url)) {
      const url = new URL(c.req.url);
      const param = [...url.searchParams.entries()].find(([k, v]) => k.includes("\u0000") || v.includes("\u0000"))?.[0];
      const path = param === undefined ? "path" : param.replace(/\u0000/g, "\\u0000");
      throw new ApiError("invalid_request", `${path}: must not contain a NUL character (%00)`, [{ path, message: "must not contain a NUL character (%00)" }]);
    }
    return next();
  });

  // Query parameters a route does not declare are refused, on every route (as unknown body fields
  // are): a typo'd filter must not silently return everything. The declared ones come from the
  // routes' OpenAPI definitions, read once they are all registered.
  let declared: Map<string, Set<string>> | undefined;
  app.use("/v1/*", async (c, next) => {
    if (!c.req.url.includes("?")) return next(); // most requests (every usage post) carry none
    const names = [...new Set(new URL(c.req.url).searchParams.keys())];
    if (names.length > 0) {
      declared ??= declaredQueries(app);
      const allowed = declared.get(`${c.req.method} ${routePath(c, -1)}`);
      const unknown = allowed ? names.filter((n) => !allowed.has(n)) : [];
      if (unknown.length > 0) {
        const list = allowed!.size === 0 ? "this route takes no query parameters" : `this route takes ${[...allowed!].sort().join(", ")}`;
        throw new ApiError("invalid_request", `unknown query parameter${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")}: ${list}`,
          unknown.map((n) => ({ path: n, message: "is not a parameter of this route" })));
      }
    }
    return next();
  });

  // The audit log: every mutating call under /v1, whatever its outcome, is recorded before its
  // answer is sent (group-committed with concurrent calls); so are refused requests of any method
  // (401, 403, 413, 429), within a budget per source so that a flood cannot fill the disk. It runs
  // before the body limit, so that an oversized body is recorded too.
  const refusedBudget = new RefusedAuditBudget();
  app.use("/v1/*", async (c, next) => {
    const mutating = ["POST", "PUT", "PATCH", "DELETE"].includes(c.req.method);
    await next();
    const refused = [401, 403, 413, 429].includes(c.res.status);
    if (!mutating && !refused) return;
    if (refused && !refusedBudget.take(c.var.principal?.keyId ?? "anonymous", Date.now())) {
      deps.metrics.auditRefusedDropped.inc();
      return;
    }
    let bodySha256: string | null = null;
    let bodyBytes: number | null = null;
    try {
      const body = Buffer.from(await c.req.arrayBuffer());
      bodyBytes = body.byteLength;
      bodySha256 = createHash("sha256").update(body).digest("hex");
    } catch {
      // an unreadable body (over the size limit): recorded without it
    }
    const p = c.var.principal;
    const entry = {
      keyId: p?.keyId ?? null, role: p?.role ?? null, scopeId: p?.scopeId ?? null, method: c.req.method, path: c.req.path.slice(0, 2000),
      route: c.req.routePath ?? null, status: c.res.status, requestId: c.get("requestId"), clientRequestId: c.var.clientRequestId ?? null,
      idempotencyKey: c.req.header("idempotency-key")?.slice(0, 255) ?? null, bodySha256, bodyBytes,
    };
    for (let attempt = 1; ; attempt++) {
      try {
        await deps.ledger.audit.submit(entry);
        return;
      } catch (err) {
        if (attempt < 3) {
          await new Promise((r) => setTimeout(r, 100 * attempt));
          continue;
        }
        // No answer without its audit row: the caller retries with its Idempotency-Key and gets
        // the original answer back, recorded this time.
        deps.log.error({ request_id: c.get("requestId"), err: String(err) }, "audit log write failed");
        c.res = problemResponse(c, new ApiError("unavailable", "the audit log could not be written; retry with the same Idempotency-Key", [], { "retry-after": "1" }));
        return;
      }
    }
  });

  // Bodies: bounded in size here; JSON-only and well-formed per route (json-body.ts).
  const limitFor = (max: number) => bodyLimit({
    maxSize: max,
    onError: () => { throw new ApiError("payload_too_large", `the body is larger than ${max} bytes`); },
  });
  const batchLimit = limitFor(deps.config.MAX_BATCH_BODY_BYTES);
  const defaultLimit = limitFor(deps.config.MAX_BODY_BYTES);
  // Usage batches (up to 10,000 records) get a larger limit than every other body.
  app.use("*", (c, next) => (c.req.path === "/v1/usage/batch" ? batchLimit(c, next) : defaultLimit(c, next)));

  registerRoutes(app);
  registerDocs(app);

  app.notFound((c) => problemResponse(c, new ApiError("not_found", `no route for ${c.req.method} ${c.req.path}`)));
  app.onError((err, c) => {
    if (err instanceof ApiError || err instanceof LedgerError) return problemResponse(c, err);
    if (err instanceof HTTPException && err.status === 400 && /JSON/i.test(err.message)) {
      return problemResponse(c, new ApiError("malformed_json", "the body is not valid JSON"));
    }
    if (err instanceof HTTPException && err.status < 500) {
      const code = err.status === 413 ? "payload_too_large" : err.status === 415 ? "unsupported_media_type" : "invalid_request";
      return problemResponse(c, new ApiError(code, err.message));
    }
    if (isChainUnavailable(err)) {
      // The short message only: a node's URL (which may hold an API key) is in the full text.
      deps.log.warn({ request_id: c.get("requestId"), err: (err as { shortMessage?: string }).shortMessage }, "chain RPC unavailable");
      return problemResponse(c, new ApiError("chain_unavailable", "the chain's RPC node did not answer; retry shortly", [], { "retry-after": "5" }));
    }
    if (isDatabaseUnavailable(err)) {
      deps.log.error({ request_id: c.get("requestId"), err: String(err) }, "database unavailable");
      return problemResponse(c, new ApiError("unavailable", "the database is unavailable; retry shortly with the same Idempotency-Key", [], { "retry-after": "1" }));
    }
    // viem's errors carry the node's URL (which may hold an API key): their short message only.
    deps.log.error({ request_id: c.get("requestId"), err: err instanceof BaseError ? { name: err.name, message: err.shortMessage } : err }, "unhandled error");
    return problemResponse(c, new ApiError("internal", `an internal error occurred; quote request id ${c.get("requestId")} when reporting it`));
  });
  return app;
}

/** The query parameter names of every route, by "METHOD /path/:param" as the router names it. */
function declaredQueries(app: OpenAPIHono<AppEnv>): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const d of app.openAPIRegistry.definitions) {
    if (d.type !== "route") continue;
    const query = d.route.request?.query as { shape?: Record<string, unknown> } | undefined;
    out.set(`${d.route.method.toUpperCase()} ${d.route.path.replace(/\{(\w+)\}/g, ":$1")}`, new Set(Object.keys(query?.shape ?? {})));
  }
  return out;
}

/** zod issues as field issues; of a union's branches, the one that came closest. */
function zodIssues(issues: z.core.$ZodIssue[], prefix: PropertyKey[] = []): FieldIssue[] {
  return issues.flatMap((i): FieldIssue[] => {
    const path = [...prefix, ...i.path];
    if (i.code === "invalid_union" && i.errors.length > 0) {
      const best = i.errors.reduce((a, b) => (b.length < a.length ? b : a));
      return zodIssues(best, path);
    }
    if (i.code === "unrecognized_keys") {
      return i.keys.map((k) => ({ path: [...path, k].join("."), message: "is not a known field" }));
    }
    return [{ path: path.join(".") || "(body)", message: i.message }];
  });
}
