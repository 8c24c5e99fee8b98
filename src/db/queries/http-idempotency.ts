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
      [pgArray(keys.map((k) => k.scope)), pgArray(keys.map((k) => k.key))],
    );
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
    [req.scope, req.key, req.method, req.path, req.hash, status, JSON.stringify(body)],
  );
  return rows.length === 1;
}

/** A response to remember for its Idempotency-Key, its body as JSON text (see src/services/response-store.ts). */
export interface StoredResponse {
  scope: string;
  key: string;
  method: string;
  path: string;
  hash: string;
  status: number;
  body: string;
}

/**
 * A response as one element of the recordset that storeEncodedResponses inserts: its body (JSON
 * text from JSON.stringify) is spliced in as it is, since quoting a batch's hundreds of kilobytes of
 * responses into an array literal cost more than the rest of the insert. The body comes first, so
 * that the fields after it win should it ever repeat a key.
 */
export function encodeStoredResponse(e: StoredResponse): string {
  return (
    `{"b":${e.body ?? "null"},"s":${JSON.stringify(e.scope)},"k":${JSON.stringify(e.key)},` +
    `"m":${JSON.stringify(e.method)},"p":${JSON.stringify(e.path)},"h":${JSON.stringify(e.hash)},"st":${e.status}}`
  );
}

/**
 * Stores encoded responses (encodeStoredResponse) with one statement, as one jsonb parameter; a
 * key already stored keeps its first response.
 */
export async function storeEncodedResponses(db: Queryable, encoded: readonly string[]): Promise<void> {
  await db.query(
    `insert into http_idempotency (scope, key, method, path, request_hash, status, body)
         select s, k, m, p, h, st, b from jsonb_to_recordset($1::text::jsonb) as t(s text, k text, m text, p text, h text, st int, b jsonb)
         on conflict do nothing`,
    [`[${encoded.join(",")}]`],
  );
}
