import type { MiddlewareHandler } from "hono";
import { ApiError } from "../problem.js";
import type { AppEnv } from "../request-context.js";

/** No NUL character anywhere in the URL (PostgreSQL cannot store or compare it): a 400 naming where. */
export const refuseNulInUrl: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (/%00/.test(c.req.url)) {
    const url = new URL(c.req.url);
    const param = [...url.searchParams.entries()].find(([k, v]) => k.includes("\u0000") || v.includes("\u0000"))?.[0];
    const path = param === undefined ? "path" : param.replace(/\u0000/g, "\\u0000");
    throw new ApiError("invalid_request", `${path}: must not contain a NUL character (%00)`, [{ path, message: "must not contain a NUL character (%00)" }]);
  }
  return next();
};
