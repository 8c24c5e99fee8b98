import type { Role } from "../../services/principal.js";
import type { Queryable } from "../client.js";

export interface ApiKey {
  id: string;
  prefix: string;
  name: string;
  role: Role;
  scopeId: string | null;
  createdAt: Date;
  revokedAt: Date | null;
}

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

/** The active key with this prefix and its stored secret hash. */
export async function findActiveKeyByPrefix(db: Queryable, prefix: string): Promise<(ApiKey & { secretHash: string }) | undefined> {
  const rows = await db.query<ApiKeyRow & { secret_hash: string }>(
    `select ${API_KEY_COLUMNS}, secret_hash from api_keys where prefix = $1 and revoked_at is null`, [prefix]);
  const r = rows[0];
  return r && { ...toApiKey(r), secretHash: r.secret_hash };
}

export async function listApiKeys(db: Queryable, options: { cursor?: string; limit: number }): Promise<ApiKey[]> {
  const rows = await db.query<ApiKeyRow & Record<string, unknown>>(
    `select ${API_KEY_COLUMNS} from api_keys where ($1::uuid is null or id > $1::uuid) order by id limit $2`,
    [options.cursor ?? null, options.limit]);
  return rows.map(toApiKey);
}
