import type { OpenAPIHonoOptions, z } from "@hono/zod-openapi";
import { withArticle } from "../../domain/access.js";
import type { FieldIssue } from "../../domain/errors.js";
import { ApiError, problemResponse } from "../problem.js";
import type { AppEnv } from "../request-context.js";

/**
 * What a route's zod schemas refuse (params, query, headers, body) becomes a 400 listing each
 * field; a missing or malformed Idempotency-Key header has a code of its own.
 */
export const invalidRequest: NonNullable<OpenAPIHonoOptions<AppEnv>["defaultHook"]> = (result, c) => {
  if (!result.success) {
    const input = (result as { data?: unknown }).data;
    const issues = zodIssues(result.error.issues).map((i) => (i.path !== "(body)" && isMissing(input, i.path) ? { ...i, message: "is required" } : i));
    if (result.target === "header" && issues.some((i) => i.path === "idempotency-key")) {
      return problemResponse(
        c,
        new ApiError(
          "idempotency_key_required",
          `${c.req.method} requests need an 'Idempotency-Key' header (any unique string of up to 255 printable ASCII characters without spaces, e.g. a UUID)`,
        ),
      );
    }
    return problemResponse(c, new ApiError("invalid_request", issues.map((i) => `${i.path}: ${i.message}`).join("; "), issues));
  }
};

/**
 * Whether the input has nothing at the issue's path (a dotted path of the target): a field left out.
 * zod then reports the type it expected, or the field's own message ("must be an RFC 3339
 * date-time"), where "is required" says what to fix.
 */
function isMissing(input: unknown, path: string): boolean {
  let v: unknown = input;
  for (const key of path.split(".")) {
    if (v === null || typeof v !== "object") return false;
    if (!Object.prototype.hasOwnProperty.call(v, key)) return true;
    v = (v as Record<string, unknown>)[key];
  }
  return v === undefined;
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
    if (path.length === 0 && i.code === "invalid_type" && i.expected === "object") {
      const got = /received (\w+)/.exec(i.message)?.[1];
      return [{ path: "(body)", message: `must be a JSON object${got ? `, not ${withArticle(got)}` : ""}` }];
    }
    return [{ path: path.join(".") || "(body)", message: i.message }];
  });
}
