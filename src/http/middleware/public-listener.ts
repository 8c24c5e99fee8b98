import type { MiddlewareHandler } from "hono";
import { ApiError } from "../problem.js";
import type { AppEnv } from "../request-context.js";

/** The public listener serves the tenants' API and the liveness checks, nothing of the management surface. */
export const hideManagementSurface: MiddlewareHandler<AppEnv> = async (c, next) => {
  const p = c.req.path;
  if (p === "/metrics" || p === "/openapi.json" || p === "/docs" || p.startsWith("/docs/")) {
    throw new ApiError("not_found", `no route for ${c.req.method} ${p} on this listener (it is on the management listener)`);
  }
  return next();
};
