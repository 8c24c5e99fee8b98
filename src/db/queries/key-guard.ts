import { LedgerError } from "../../domain/errors.js";
import type { Queryable } from "../client.js";
import { pgArray } from "../sql-arrays.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Revocation and the writes of a key exclude each other (docs/api.md, "Revoking a key"): every write
 * made with an API key holds the key's lock, shared, from this call until its transaction ends,
 * and checks that the key is not revoked; a revocation takes the lock exclusively
 * (`lockKeyForRevocation`) before it marks the key. So a write whose key was revoked while it was
 * under way (its body streaming, waiting for a lock, queued in a group commit) is refused here,
 * and once a revocation has committed, no write made with the key commits after it: the ones that
 * held the lock committed before it, the ones that come later see the key revoked.
 *
 * One statement: the function `hold_api_keys` (migrations/0042_hold_api_keys.sql) takes the locks,
 * then reads the keys revoked with a snapshot taken once they are held (a VOLATILE function's
 * queries each take their own), so it sees a revocation that committed while the locks were
 * awaited. Ids that are not an API key's (the bootstrap admin key of the environment) are left out.
 */
export async function holdKeys(tx: Queryable, keyIds: readonly (string | null)[]): Promise<void> {
  const ids = [...new Set(keyIds.filter((k): k is string => k !== null && UUID.test(k)).map((k) => k.toLowerCase()))].sort();
  if (ids.length === 0) return;
  const revoked = await tx.query<{ id: string }>("select id::text as id from hold_api_keys($1::uuid[]) as id", [pgArray(ids)]);
  if (revoked.length > 0) {
    throw new LedgerError("unauthorized", "the API key was revoked before this write was committed; nothing was written");
  }
}

/** In a revocation's transaction, before the key is marked: waits for the writes under way with it (see holdKeys). */
export async function lockKeyForRevocation(tx: Queryable, keyId: string): Promise<void> {
  if (!UUID.test(keyId)) return;
  await tx.query("select pg_advisory_xact_lock(hashtextextended('api-key:' || $1::uuid::text, 0))", [keyId]);
}
