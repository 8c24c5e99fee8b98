import { and, asc, desc, eq, sql } from "drizzle-orm";
import type { Queryable } from "../client.js";
import { orm, run } from "../orm.js";
import { payoutAddressChallenges, payoutAddressEvents, payoutAddresses } from "../schema/index.js";

/** A challenge issued for an operator to sign with the address it wants to be paid to. */
export async function insertAddressChallenge(
  db: Queryable,
  c: { id: string; operatorId: string; chainId: bigint; address: string; message: string; expiresAt: Date },
): Promise<void> {
  await run(
    orm(db)
      .insert(payoutAddressChallenges)
      .values({ id: c.id, operatorId: c.operatorId, chainId: c.chainId, address: c.address, message: c.message, expiresAt: c.expiresAt }),
  );
}

export type AddressChallengeRow = { operator_id: string; chain_id: string; address: string; message: string; expired: boolean; used_at: Date | null };

/** The challenge, locked, with whether it has expired at `now`. */
export async function lockAddressChallenge(tx: Queryable, challengeId: string, now: Date): Promise<AddressChallengeRow | undefined> {
  const c = payoutAddressChallenges;
  const rows = await run(
    orm(tx)
      .select({
        operator_id: c.operatorId,
        chain_id: sql<string>`${c.chainId}::text`,
        address: c.address,
        message: c.message,
        expired: sql<boolean>`${c.expiresAt} <= ${now.toISOString()}::timestamptz`,
        used_at: c.usedAt,
      })
      .from(c)
      .where(eq(c.id, challengeId))
      .for("update"),
  );
  return rows[0];
}

/** The operator's current payout address on a chain, locked. */
export async function lockCurrentPayoutAddress(
  tx: Queryable,
  operatorId: string,
  chainId: bigint,
): Promise<{ address: string; verified_at: Date | string } | undefined> {
  const rows = await run(
    orm(tx)
      .select({ address: payoutAddresses.address, verified_at: payoutAddresses.verifiedAt })
      .from(payoutAddresses)
      .where(and(eq(payoutAddresses.operatorId, operatorId), eq(payoutAddresses.chainId, chainId)))
      .for("update"),
  );
  return rows[0];
}

export async function markAddressChallengeUsed(tx: Queryable, challengeId: string, at: Date): Promise<void> {
  await run(orm(tx).update(payoutAddressChallenges).set({ usedAt: at }).where(eq(payoutAddressChallenges.id, challengeId)));
}

/** Sets (inserts or replaces) the operator's payout address on a chain. */
export async function upsertPayoutAddress(
  tx: Queryable,
  a: { operatorId: string; chainId: bigint; address: string; challengeId: string; verifiedAt: Date },
): Promise<void> {
  await run(
    orm(tx)
      .insert(payoutAddresses)
      .values({ operatorId: a.operatorId, chainId: a.chainId, address: a.address, challengeId: a.challengeId, verifiedAt: a.verifiedAt })
      .onConflictDoUpdate({
        target: [payoutAddresses.operatorId, payoutAddresses.chainId],
        set: { address: sql`excluded.address`, challengeId: sql`excluded.challenge_id`, verifiedAt: sql`excluded.verified_at` },
      }),
  );
}

/** Appends a change of payout address to its history. */
export async function insertPayoutAddressEvent(
  tx: Queryable,
  e: {
    operatorId: string;
    chainId: bigint;
    oldAddress: string | null;
    newAddress: string;
    challengeId: string;
    signature: string;
    changedBy: string;
    requestId: string | null;
    changedAt: Date;
  },
): Promise<void> {
  await run(
    orm(tx).insert(payoutAddressEvents).values({
      operatorId: e.operatorId,
      chainId: e.chainId,
      oldAddress: e.oldAddress,
      newAddress: e.newAddress,
      challengeId: e.challengeId,
      signature: e.signature,
      changedBy: e.changedBy,
      requestId: e.requestId,
      changedAt: e.changedAt,
    }),
  );
}

/** The operator's current payout addresses, by chain. */
export async function listCurrentPayoutAddresses(
  db: Queryable,
  operatorId: string,
): Promise<{ chain_id: string; address: string; verified_at: Date | string }[]> {
  const chainIdText = sql<string>`${payoutAddresses.chainId}::text`;
  return run(
    orm(db)
      .select({ chain_id: chainIdText, address: payoutAddresses.address, verified_at: payoutAddresses.verifiedAt })
      .from(payoutAddresses)
      .where(eq(payoutAddresses.operatorId, operatorId))
      // By the chain id's text ("10" before "9"), as this listing has always been ordered.
      .orderBy(asc(chainIdText)),
  );
}

/** The operator's last 100 payout address changes, newest first. */
export async function listPayoutAddressEvents(
  db: Queryable,
  operatorId: string,
): Promise<{ chain_id: string; old_address: string | null; new_address: string; changed_by: string; changed_at: Date | string; request_id: string | null }[]> {
  const e = payoutAddressEvents;
  return run(
    orm(db)
      .select({
        chain_id: sql<string>`${e.chainId}::text`,
        old_address: e.oldAddress,
        new_address: e.newAddress,
        changed_by: e.changedBy,
        changed_at: e.changedAt,
        request_id: e.requestId,
      })
      .from(e)
      .where(eq(e.operatorId, operatorId))
      .orderBy(desc(e.id))
      .limit(100),
  );
}

/**
 * Serializes the changes of an operator's payout addresses: a first address has no row to lock, so
 * two first addresses at once would both see none. `for no key update`: usage and payouts that
 * reference the operator (`for key share`) do not wait.
 */
export async function lockOperatorAddresses(tx: Queryable, operatorId: string): Promise<void> {
  await tx.query("select 1 from operators where id = $1 for no key update", [operatorId]);
}

/**
 * Whether the operator is new: it never had a payout address on any chain and never earned
 * anything (no credit, posted or pending, ever reached its payable in any asset). Only such an
 * operator's own key sets its first address on its own word.
 */
export async function operatorIsNew(tx: Queryable, operatorId: string): Promise<boolean> {
  const rows = await tx.query<{ fresh: boolean }>(
    `select not exists (select 1 from payout_address_events where operator_id = $1)
        and not exists (
          select 1 from accounts a join account_balances b on b.account_id = a.id
           where a.opened_by_service and a.marketplace_id is null and a.code = 'operator_payable'
             and a.owner_type = 'operator' and a.owner_id = $1 and (b.credits_posted > 0 or b.credits_pending > 0)
        ) as fresh`,
    [operatorId],
  );
  return rows[0]!.fresh;
}

/** The id of the last change of the operator's payout address on a chain (null: none yet). */
export async function lastAddressChange(tx: Queryable, operatorId: string, chainId: bigint): Promise<string | null> {
  const rows = await tx.query<{ id: string | null }>("select max(id)::text as id from payout_address_events where operator_id = $1 and chain_id = $2", [
    operatorId,
    chainId.toString(),
  ]);
  return rows[0]?.id ?? null;
}
