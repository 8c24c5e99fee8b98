import type { OpenAPIHono } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { matchedRoutes, routePath } from "hono/route";
import { ApiError } from "../problem.js";
import type { AppEnv } from "../request-context.js";

/**
 * Query parameters a route does not declare are refused, on every route (as unknown body fields
 * are): a typo'd filter must not silently return everything. The declared ones come from the
 * routes' OpenAPI definitions, read once they are all registered (at the first request).
 */
export function refuseUnknownQueryParameters(app: OpenAPIHono<AppEnv>): MiddlewareHandler<AppEnv> {
  let declared: Map<string, Set<string>> | undefined;
  return async (c, next) => {
    if (!c.req.url.includes("?")) return next(); // most requests (every usage post) carry none
    const names = [...new Set(new URL(c.req.url).searchParams.keys())];
    if (names.length > 0) {
      declared ??= declaredQueries(app);
      // The first route matched answers (a static path registered before a parameterised one of the same shape).
      const first = matchedRoutes(c).find((r) => declared!.has(`${c.req.method} ${r.path}`));
      const allowed = declared.get(`${c.req.method} ${first?.path ?? routePath(c, -1)}`);
      const unknown = allowed ? names.filter((n) => !allowed.has(n)) : [];
      if (unknown.length > 0) {
        const list = allowed!.size === 0 ? "this route takes no query parameters" : `this route takes ${[...allowed!].sort().join(", ")}`;
        throw new ApiError(
          "invalid_request",
          `unknown query parameter${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")}: ${list}`,
          unknown.map((n) => ({ path: n, message: "is not a parameter of this route" })),
        );
      }
    }
    return next();
  };
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
