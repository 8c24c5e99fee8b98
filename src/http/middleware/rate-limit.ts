import type { MiddlewareHandler } from "hono";
import { ApiError } from "../problem.js";
import type { AppEnv } from "../request-context.js";

/**
 * After the API key (auth.ts): 429 with Retry-After when the caller's key is over its rate limit
 * (the per-process token buckets of rate-limit.ts; no limit without a limiter).
 */
export const rateLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  const wait = c.get("deps").rateLimiter?.take(c.get("principal").keyId);
  if (wait !== undefined) {
    throw new ApiError("rate_limited", `this API key sends more than its rate limit allows; retry in ${wait} s`, [], { "retry-after": String(wait) });
  }
  await next();
};
