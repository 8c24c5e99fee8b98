import { z } from "@hono/zod-openapi";
import type { Queryable } from "../../services/context.js";
import { getAssetByCode } from "../../services/reads.js";
import { isUuid } from "../../domain/ids.js";
import { checkPeriod } from "../period.js";
import { ApiError, Problem } from "../problem.js";
import { problemExamples } from "../problems/openapi.js";

/** Shared pieces of route definitions. */
export const security = [{ apiKey: [] }];

/** An error status: problem+json, with a named example for each problem code of the status (src/http/problems/). */
const problem = (status: number, description: string) => ({
  description,
  content: { "application/problem+json": { schema: Problem, examples: problemExamples(status) } },
});

export const errorResponses = {
  400: problem(400, "invalid request: see `errors` for each field"),
  401: problem(401, "missing or unknown API key"),
  403: problem(403, "the key's role may not do this"),
  404: problem(404, "not found, or not visible to this key"),
  408: problem(408, "the body did not arrive in time; the connection is closed"),
  409: problem(409, "conflict with the current state or a reused Idempotency-Key"),
  413: problem(413, "body too large"),
  415: problem(415, "body is not application/json"),
  422: problem(422, "refused by the ledger's rules (e.g. insufficient funds)"),
  429: problem(429, "the API key's rate limit is exceeded; retry after the Retry-After seconds"),
  500: problem(500, "internal error (a bug): quote the request_id when reporting it; a retry with the same Idempotency-Key is safe"),
  503: problem(503, "database or chain node unavailable; retry with the same Idempotency-Key"),
} as const;

export const IdempotencyHeader = z.object({
  "idempotency-key": z
    .string()
    .openapi({ description: "unique per request; a retry with the same key replays the original response", example: "3f1c0a52-5b1e-4d8e-9a43-5f0d3b4c2e11" }),
});

export const jsonBody = <T extends z.ZodType>(schema: T, required = true) => ({
  content: { "application/json": { schema } },
  required,
});

/**
 * The body of a route that takes none: no body, or `{}`; anything else is refused 400 (an unknown
 * field is named), so that a body meant for another route does not act as if it were read.
 */
export const NoBody = jsonBody(z.strictObject({}).openapi("NoBody", { description: "this route takes no fields: send no body, or {}" }), false);

export const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

/**
 * The checks shared by time-windowed lists: a cursor must be one the API returned (an id), and the
 * window [from, to) must not be empty (checkPeriod). Returns the window as dates.
 */
export function listWindow(q: { cursor?: string; from?: string; to?: string }): { from?: Date; to?: Date } {
  if (q.cursor !== undefined && !isUuid(q.cursor))
    throw new ApiError("invalid_request", "cursor is not one this API returned", [{ path: "cursor", message: "invalid" }]);
  return checkPeriod(q);
}

/** The id of an asset named by a query's `asset` filter (404 when there is none), or undefined without one. */
export async function assetFilter(db: Queryable, code: string | undefined): Promise<string | undefined> {
  if (code === undefined) return undefined;
  const asset = await getAssetByCode(db, code);
  if (!asset) throw new ApiError("asset_not_found", `asset ${code} does not exist`, [{ path: "asset", message: "does not exist" }]);
  return asset.id;
}
