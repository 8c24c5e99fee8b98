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
