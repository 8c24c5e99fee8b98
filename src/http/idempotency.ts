import type { Context } from "hono";
import { canonicalSha256 } from "../domain/canonical.js";
import { batchTuning, giveWay } from "../give-way.js";
import type { Database, Queryable } from "../services/context.js";
import { findStoredResponse, storeResponse, type IdempotencyKeyRef } from "../services/response-store.js";
import { tenantOf } from "../domain/access.js";
import type { AppEnv } from "./request-context.js";
import { ApiError } from "./problem.js";

/**
 * `Idempotency-Key` on POST requests. The response to a key is stored per tenant with a hash of the
 * request (method, path, body); a retry with the same key and request gets the stored status and
 * body back (header `Idempotent-Replayed: true`), a different request with the same key gets 409.
 * Refusals (4xx) are not stored: a retry is evaluated afresh, like the ledger's own keys.
 */
export type IdempotentRequest = IdempotencyKeyRef;

const KEY = /^[\x21-\x7e]{1,255}$/;

export async function idempotentRequest(c: Context<AppEnv>, body: unknown): Promise<IdempotentRequest> {
  const key = c.req.header("idempotency-key");
  if (key === undefined)
    throw new ApiError(
      "idempotency_key_required",
      "POST requests need an 'Idempotency-Key' header (any unique string up to 255 printable characters, e.g. a UUID)",
    );
  if (!KEY.test(key))
    throw new ApiError("invalid_request", "the Idempotency-Key header must be 1-255 printable ASCII characters without spaces", [
      { path: "Idempotency-Key", message: "invalid" },
    ]);
  const method = c.req.method;
  const path = c.req.path;
  return { scope: tenantOf(c.get("principal")), key, method, path, hash: await canonicalSha256({ method, path, body }, giveWay, batchTuning.yieldEvery) };
}

/**
 * The stored response for this request, or undefined; throws 409 when the key was used for another
 * request. Outside a transaction, concurrent requests' lookups share one query (ReadBatcher).
 */
export async function storedResponse(db: Queryable, req: IdempotentRequest, options: { shared?: boolean } = {}): Promise<Response | undefined> {
  const seen = await findStoredResponse(db, req, options);
  if (!seen) return undefined;
  if (seen.request_hash !== req.hash) {
    throw new ApiError("idempotency_key_reused", `Idempotency-Key "${req.key}" was already used for a different request; use a new key for a new request`);
  }
  return new Response(JSON.stringify(seen.body), {
    status: seen.status,
    headers: { "content-type": "application/json", "idempotent-replayed": "true" },
  });
}

class Raced extends Error {}

/**
 * Runs a write and stores its response in one database transaction. If a concurrent request with
 * the same key committed first, the write is rolled back and the stored response replayed.
 * `stored` lets a response keep a secret out of the database (e.g. a new API key's secret).
 */
export async function idempotently(
  c: Context<AppEnv>,
  body: unknown,
  write: (tx: Queryable) => Promise<{ status: 200 | 201 | 202; body: unknown; stored?: unknown }>,
): Promise<Response> {
  const req = await idempotentRequest(c, body);
  const db: Database = c.get("deps").ledger.db;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await db.transaction(async (tx) => {
        const replay = await storedResponse(tx, req);
        if (replay) return replay;
        const out = await write(tx);
        if (!(await storeResponse(tx, req, out.status, out.stored ?? out.body))) throw new Raced();
        return c.json(out.body as object, out.status);
      });
    } catch (err) {
      if (!(err instanceof Raced)) throw err;
    }
  }
  throw new ApiError("idempotency_conflict", `another request with Idempotency-Key "${req.key}" is in progress; retry later`);
}

/**
 * For writes that keep their own idempotency in the ledger (transfers, usage, holds, deposits):
 * answer a retry from the stored response, or run the write and store its response after it
 * committed. `ledgerKey` gives the write a ledger idempotency key derived from the tenant and the
 * header key, so a retry after a crash between commit and store is still written once.
 */
export async function replayOrRun(
  c: Context<AppEnv>,
  body: unknown,
  write: (ledgerKey: (prefix: string) => string) => Promise<{ status: 200 | 201; body: unknown; remember?: boolean }>,
): Promise<Response> {
  const req = await idempotentRequest(c, body);
  const db = c.get("deps").ledger.db;
  const replay = await storedResponse(db, req, { shared: true });
  if (replay) return replay;
  // Length-prefixed parts, so that no tenant and header key can spell another's ledger key.
  const out = await write((prefix) => `${prefix}:${req.scope.length}:${req.scope}:${req.key.length}:${req.key}`);
  // A batch answer with refused items is not remembered, like any refusal: a retry re-evaluates
  // them (items already written then answer as duplicates / replays).
  if (out.remember !== false) {
    await c.get("deps").ledger.responses.submit({ ...req, status: out.status, body: JSON.stringify(out.body) });
  }
  return c.json(out.body as object, out.status);
}
