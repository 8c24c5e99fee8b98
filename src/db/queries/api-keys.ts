import type { ApiKey, Role } from "../../domain/access.js";
import type { Queryable } from "../client.js";
import { batcherFor, type ReadBatcher } from "../read-batcher.js";
import { pgArray } from "../sql-arrays.js";

interface ApiKeyRow {
  id: string; prefix: string; name: string; role: Role; scope_id: string | null; created_at: Date | string; revoked_at: Date | string | null;
}

export const API_KEY_COLUMNS = "id, prefix, name, role, scope_id, created_at, revoked_at";

export function toApiKey(r: ApiKeyRow): ApiKey {
  return {
    id: r.id, prefix: r.prefix, name: r.name, role: r.role, scopeId: r.scope_id,
    createdAt: new Date(r.created_at), revokedAt: r.revoked_at === null ? null : new Date(r.revoked_at),
  };
}

type KeyWithSecret = ApiKey & { secretHash: string };
const byPrefix = new WeakMap<Queryable, ReadBatcher<string, KeyWithSecret | undefined>>();

/**
 * The active key with this prefix and its stored secret hash. Every request looks its key up:
 * concurrent lookups share one query (ReadBatcher), so a revocation is seen by the next query as
 * before, with nothing cached.
 */
export function findActiveKeyByPrefix(db: Queryable, prefix: string): Promise<KeyWithSecret | undefined> {
  return batcherFor(byPrefix, db, async (q, prefixes: string[]) => {
    const rows = await q.query<ApiKeyRow & { secret_hash: string }>(
      `select ${API_KEY_COLUMNS}, secret_hash from api_keys where prefix = any($1::text[]) and revoked_at is null`, [pgArray([...new Set(prefixes)])]);
    const found = new Map(rows.map((r) => [r.prefix, { ...toApiKey(r), secretHash: r.secret_hash }]));
    return prefixes.map((p) => found.get(p));
  }).get(prefix);
}

export async function listApiKeys(db: Queryable, options: { cursor?: string; limit: number }): Promise<ApiKey[]> {
  const rows = await db.query<ApiKeyRow & Record<string, unknown>>(
    `select ${API_KEY_COLUMNS} from api_keys where ($1::uuid is null or id > $1::uuid) order by id limit $2`,
    [options.cursor ?? null, options.limit]);
  return rows.map(toApiKey);
}

/** Inserts a key with the hash of its secret (never the secret). */
export async function insertApiKey(
  db: Queryable,
  k: { id: string; prefix: string; secretHash: string; name: string; role: Role; scopeId: string | null; createdBy: string | null },
): Promise<ApiKey> {
  const rows = await db.query<ApiKeyRow & Record<string, unknown>>(
    `insert into api_keys (id, prefix, secret_hash, name, role, scope_id, created_by) values ($1, $2, $3, $4, $5, $6, $7) returning ${API_KEY_COLUMNS}`,
    [k.id, k.prefix, k.secretHash, k.name, k.role, k.scopeId, k.createdBy],
  );
  return toApiKey(rows[0]!);
}

/** Marks a key revoked (keeping the first revocation's time); undefined when there is no such key. */
export async function markApiKeyRevoked(db: Queryable, id: string): Promise<ApiKey | undefined> {
  const rows = await db.query<ApiKeyRow & Record<string, unknown>>(
    `update api_keys set revoked_at = coalesce(revoked_at, now()) where id = $1 returning ${API_KEY_COLUMNS}`, [id]);
  return rows[0] && toApiKey(rows[0]);
}
