import type { Queryable } from "../client.js";

/** A challenge issued for an operator to sign with the address it wants to be paid to. */
export async function insertAddressChallenge(
  db: Queryable,
  c: { id: string; operatorId: string; chainId: bigint; address: string; message: string; expiresAt: Date },
): Promise<void> {
  await db.query(
    "insert into payout_address_challenges (id, operator_id, chain_id, address, message, expires_at) values ($1, $2, $3, $4, $5, $6)",
    [c.id, c.operatorId, c.chainId.toString(), c.address, c.message, c.expiresAt.toISOString()]);
}

export type AddressChallengeRow = { operator_id: string; chain_id: string; address: string; message: string; expired: boolean; used_at: Date | null };

/** The challenge, locked, with whether it has expired at `now`. */
export async function lockAddressChallenge(tx: Queryable, challengeId: string, now: Date): Promise<AddressChallengeRow | undefined> {
  const rows = await tx.query<AddressChallengeRow>(
    "select operator_id, chain_id::text as chain_id, address, message, expires_at <= $2::timestamptz as expired, used_at from payout_address_challenges where id = $1 for update",
    [challengeId, now.toISOString()]);
  return rows[0];
}

/** The operator's current payout address on a chain, locked. */
export async function lockCurrentPayoutAddress(tx: Queryable, operatorId: string, chainId: bigint): Promise<{ address: string; verified_at: Date | string } | undefined> {
  const rows = await tx.query<{ address: string; verified_at: Date | string }>(
    "select address, verified_at from payout_addresses where operator_id = $1 and chain_id = $2 for update", [operatorId, chainId.toString()]);
  return rows[0];
}

export async function markAddressChallengeUsed(tx: Queryable, challengeId: string, at: Date): Promise<void> {
  await tx.query("update payout_address_challenges set used_at = $2 where id = $1", [challengeId, at.toISOString()]);
}

/** Sets (inserts or replaces) the operator's payout address on a chain. */
export async function upsertPayoutAddress(
  tx: Queryable,
  a: { operatorId: string; chainId: bigint; address: string; challengeId: string; verifiedAt: Date },
): Promise<void> {
  await tx.query(
    `insert into payout_addresses (operator_id, chain_id, address, challenge_id, verified_at) values ($1, $2, $3, $4, $5)
       on conflict (operator_id, chain_id) do update set address = excluded.address, challenge_id = excluded.challenge_id, verified_at = excluded.verified_at`,
    [a.operatorId, a.chainId.toString(), a.address, a.challengeId, a.verifiedAt.toISOString()]);
}

/** Appends a change of payout address to its history. */
export async function insertPayoutAddressEvent(
  tx: Queryable,
  e: {
    operatorId: string; chainId: bigint; oldAddress: string | null; newAddress: string; challengeId: string; signature: string;
    changedBy: string; requestId: string | null; changedAt: Date;
  },
): Promise<void> {
  await tx.query(
    `insert into payout_address_events (operator_id, chain_id, old_address, new_address, challenge_id, signature, changed_by, request_id, changed_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [e.operatorId, e.chainId.toString(), e.oldAddress, e.newAddress, e.challengeId, e.signature, e.changedBy, e.requestId, e.changedAt.toISOString()]);
}

/** The operator's current payout addresses, by chain. */
export async function listCurrentPayoutAddresses(db: Queryable, operatorId: string) {
  return db.query<{ chain_id: string; address: string; verified_at: Date | string }>(
    "select chain_id::text as chain_id, address, verified_at from payout_addresses where operator_id = $1 order by chain_id", [operatorId]);
}

/** The operator's last 100 payout address changes, newest first. */
export async function listPayoutAddressEvents(db: Queryable, operatorId: string) {
  return db.query<{ chain_id: string; old_address: string | null; new_address: string; changed_by: string; changed_at: Date | string; request_id: string | null }>(
    `select chain_id::text as chain_id, old_address, new_address, changed_by, changed_at, request_id from payout_address_events
      where operator_id = $1 order by id desc limit 100`, [operatorId]);
}
