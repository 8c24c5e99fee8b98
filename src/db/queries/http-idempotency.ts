import type { Queryable } from "../client.js";
import { batcherFor, type ReadBatcher } from "../read-batcher.js";
import { pgArray } from "../sql-arrays.js";

/** The request an `Idempotency-Key` was used for (see src/http/idempotency.ts). */
export interface IdempotencyKeyRef {
  scope: string;
  key: string;
  method: string;
  path: string;
  hash: string;
}

export type Stored = { request_hash: string; status: number; body: unknown };
const stored = new WeakMap<Queryable, ReadBatcher<{ scope: string; key: string }, Stored | undefined>>();

/**
 * The response stored for a tenant's key, or undefined. With `shared` (outside a transaction),
 * concurrent requests' lookups share one query (ReadBatcher).
 */
export async function findStoredResponse(db: Queryable, req: { scope: string; key: string }, options: { shared?: boolean } = {}): Promise<Stored | undefined> {
  if (!options.shared) {
    return (await db.query<Stored>("select request_hash, status, body from http_idempotency where scope = $1 and key = $2", [req.scope, req.key]))[0];
  }
  return batcherFor(stored, db, async (q, keys: { scope: string; key: string }[]) => {
    const rows = await q.query<Stored & { scope: string; key: string }>(
      `select h.scope, h.key, h.request_hash, h.status, h.body
         from http_idempotency h join unnest($1::text[], $2::text[]) as k(s, k) on h.scope = k.s and h.key = k.k`,
      [pgArray(keys.map((k) => k.scope)), pgArray(keys.map((k) => k.key))]);
    const id = (k: { scope: string; key: string }) => `${k.scope.length}:${k.scope}:${k.key}`;
    const found = new Map(rows.map((r) => [id(r), r]));
    return keys.map((k) => found.get(id(k)));
  }).get({ scope: req.scope, key: req.key });
}

/** Stores a response; returns false when another request stored one for the key first. */
export async function storeResponse(db: Queryable, req: IdempotencyKeyRef, status: number, body: unknown): Promise<boolean> {
  const rows = await db.query(
    `insert into http_idempotency (scope, key, method, path, request_hash, status, body) values ($1, $2, $3, $4, $5, $6, $7::text::jsonb)
     on conflict do nothing returning 1`,
    [req.scope, req.key, req.method, req.path, req.hash, status, JSON.stringify(body)]);
  return rows.length === 1;
}
