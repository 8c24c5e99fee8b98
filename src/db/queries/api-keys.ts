import { and, asc, eq, gt, isNull, sql } from "drizzle-orm";
import type { ApiKey, Role } from "../../domain/access.js";
import type { Queryable } from "../client.js";
import { orm, run } from "../orm.js";
import { batcherFor, type ReadBatcher } from "../read-batcher.js";
import { apiKeys } from "../schema/index.js";
import { pgArray } from "../sql-arrays.js";

interface ApiKeyRow {
  id: string;
  prefix: string;
  name: string;
  role: Role;
  scope_id: string | null;
  created_at: Date | string;
  revoked_at: Date | string | null;
  created_by: string | null;
}

export const API_KEY_COLUMNS = "id, prefix, name, role, scope_id, created_at, revoked_at, created_by";

/** The columns of API_KEY_COLUMNS, for the query builder. */
const apiKeyFields = {
  id: apiKeys.id,
  prefix: apiKeys.prefix,
  name: apiKeys.name,
  role: sql<Role>`${apiKeys.role}`,
  scope_id: apiKeys.scopeId,
  created_at: apiKeys.createdAt,
  revoked_at: apiKeys.revokedAt,
  created_by: apiKeys.createdBy,
};

export function toApiKey(r: ApiKeyRow): ApiKey {
  return {
    id: r.id,
    prefix: r.prefix,
    name: r.name,
    role: r.role,
    scopeId: r.scope_id,
    createdAt: new Date(r.created_at),
    revokedAt: r.revoked_at === null ? null : new Date(r.revoked_at),
    createdBy: r.created_by,
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
    // One array parameter (= any), not inArray's one parameter per prefix: one statement whatever the batch size.
    const rows = await run(
      orm(q)
        .select({ ...apiKeyFields, secret_hash: apiKeys.secretHash })
        .from(apiKeys)
        .where(and(sql`${apiKeys.prefix} = any(${pgArray([...new Set(prefixes)])}::text[])`, isNull(apiKeys.revokedAt))),
    );
    const found = new Map(rows.map((r) => [r.prefix, { ...toApiKey(r), secretHash: r.secret_hash }]));
    return prefixes.map((p) => found.get(p));
  }).get(prefix);
}

/** Keys in id order after `cursor`; with `createdBy`, only the keys that key created (the bootstrap admin's: "bootstrap-admin"). */
export async function listApiKeys(db: Queryable, options: { cursor?: string; limit: number; createdBy?: string }): Promise<ApiKey[]> {
  const rows = await run(
    orm(db)
      .select(apiKeyFields)
      .from(apiKeys)
      .where(
        and(
          options.cursor === undefined ? undefined : gt(apiKeys.id, options.cursor),
          options.createdBy === undefined ? undefined : eq(apiKeys.createdBy, options.createdBy),
        ),
      )
      .orderBy(asc(apiKeys.id))
      .limit(options.limit),
  );
  return rows.map(toApiKey);
}

/** Inserts a key with the hash of its secret (never the secret). */
export async function insertApiKey(
  db: Queryable,
  k: { id: string; prefix: string; secretHash: string; name: string; role: Role; scopeId: string | null; createdBy: string | null },
): Promise<ApiKey> {
  const rows = await run(
    orm(db)
      .insert(apiKeys)
      .values({ id: k.id, prefix: k.prefix, secretHash: k.secretHash, name: k.name, role: k.role, scopeId: k.scopeId, createdBy: k.createdBy })
      .returning(apiKeyFields),
  );
  return toApiKey(rows[0]!);
}

/** Marks a key revoked (keeping the first revocation's time); undefined when there is no such key. */
export async function markApiKeyRevoked(db: Queryable, id: string, at: Date): Promise<ApiKey | undefined> {
  const rows = await run(
    orm(db)
      .update(apiKeys)
      .set({ revokedAt: sql`coalesce(${apiKeys.revokedAt}, ${at.toISOString()}::timestamptz)` })
      .where(eq(apiKeys.id, id))
      .returning(apiKeyFields),
  );
  return rows[0] && toApiKey(rows[0]);
}
