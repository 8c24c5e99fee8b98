import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { ApiError } from "../problem.js";
import type { AppDeps, AppEnv } from "../request-context.js";

/**
 * Bodies: bounded in size here; JSON-only and well-formed per route (json-body.ts). Usage batches
 * (up to 10,000 records) get a larger limit than every other body.
 */
export function bodyLimits(config: AppDeps["config"]): MiddlewareHandler<AppEnv> {
  const limitFor = (max: number) =>
    bodyLimit({
      maxSize: max,
      onError: () => {
        throw new ApiError("payload_too_large", `the body is larger than ${max} bytes`);
      },
    });
  const batchLimit = limitFor(config.MAX_BATCH_BODY_BYTES);
  const defaultLimit = limitFor(config.MAX_BODY_BYTES);
  return (c, next) => (c.req.path === "/v1/usage/batch" ? batchLimit(c, next) : defaultLimit(c, next));
}
