import { LedgerError } from "../../domain/errors.js";
import type { Queryable } from "../client.js";
import { pgArray } from "../sql-arrays.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const keyIdsOf = (keyIds: readonly (string | null)[]) =>
  [...new Set(keyIds.filter((k): k is string => k !== null && UUID.test(k)).map((k) => k.toLowerCase()))].sort();

/**
 * Revocation and the writes of a key exclude each other (docs/api.md, "Keys and roles"): every
 * write made with an API key holds the key's lock, shared, from this call until its transaction
 * ends, and checks that the key is not revoked; a revocation takes the lock exclusively
 * (`lockKeyForRevocation`) before it marks the key. So a write whose key was revoked while it was
 * under way (its body streaming, waiting for a lock, queued in a group commit) is refused here,
 * and once a revocation has committed, no write made with the key commits after it: the ones that
 * held the lock committed before it, the ones that come later see the key revoked.
 *
 * One statement: the function `hold_api_keys` (migrations/0042_hold_api_keys.sql) takes the locks,
 * then reads the keys revoked with a snapshot taken once they are held (a VOLATILE function's
 * queries each take their own), so it sees a revocation that committed while the locks were
 * awaited. Ids that are not an API key's (the bootstrap admin key of the environment, the
 * scheduler) are left out. Answers the ids of the keys revoked.
 */
export async function holdKeysRevoked(tx: Queryable, keyIds: readonly (string | null)[]): Promise<Set<string>> {
  const ids = keyIdsOf(keyIds);
  if (ids.length === 0) return new Set();
  const revoked = await tx.query<{ id: string }>("select id::text as id from hold_api_keys($1::uuid[]) as id", [pgArray(ids)]);
  return new Set(revoked.map((r) => r.id));
}

/** `holdKeysRevoked` for the keys a write is made with: 401 when one of them was revoked. */
export async function holdKeys(tx: Queryable, keyIds: readonly (string | null)[]): Promise<void> {
  if ((await holdKeysRevoked(tx, keyIds)).size > 0) throw revokedMeanwhile();
}

const revokedMeanwhile = () => new LedgerError("unauthorized", "the API key was revoked before this write was committed; nothing was written");

/**
 * In a revocation's transaction, before the key is marked: takes the key's lock exclusively (so it
 * waits for the writes under way with it) and the revoking key's shared, in the order of their ids
 * (two admins revoking each other at once then wait for each other instead of deadlocking), then
 * checks that the revoking key is not revoked (401): it may have been, by the other one.
 */
export async function lockKeyForRevocation(tx: Queryable, keyId: string, by: string): Promise<void> {
  const target = UUID.test(keyId) ? keyId.toLowerCase() : undefined;
  const caller = UUID.test(by) ? by.toLowerCase() : undefined;
  for (const k of keyIdsOf([target ?? null, caller ?? null])) {
    const lock = k === target ? "pg_advisory_xact_lock" : "pg_advisory_xact_lock_shared";
    await tx.query(`select ${lock}(hashtextextended('api-key:' || $1::uuid::text, 0))`, [k]);
  }
  if (caller === undefined) return;
  const [row] = await tx.query<{ revoked: boolean }>("select revoked_at is not null as revoked from api_keys where id = $1::uuid", [caller]);
  if (row?.revoked) throw revokedMeanwhile();
}
