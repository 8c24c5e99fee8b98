import { getAddress, verifyMessage } from "viem";
import type { Settlements } from "../chain/settlement.js";
import type { Database, Queryable } from "../db/client.js";
import { LedgerError } from "../domain/errors.js";
import { uuidv7 } from "../domain/ids.js";
import { addressChallengeMessage } from "../domain/payouts.js";
import { getOperator } from "./marketplaces.js";
import { inTransaction } from "./transaction.js";

/** How long an operator has to sign a challenge. */
export const CHALLENGE_TTL_SECONDS = 15 * 60;

export interface AddressChallenge {
  id: string;
  operatorId: string;
  chainId: bigint;
  address: string;
  message: string;
  expiresAt: Date;
}

/** Issues a message for the operator to sign with the address it wants to be paid to. */
export async function issueAddressChallenge(db: Queryable, settlements: Settlements, operatorId: string, chainId: bigint, address: string, now: Date): Promise<AddressChallenge> {
  settlements.requireAddressOn(chainId, address);
  if (!(await getOperator(db, operatorId))) throw new LedgerError("operator_not_found", `operator ${operatorId} does not exist`);
  const id = uuidv7(now.getTime());
  const expiresAt = new Date(Math.floor(now.getTime() / 1000) * 1000 + CHALLENGE_TTL_SECONDS * 1000);
  const lower = address.toLowerCase();
  // The checksummed form is what wallets show; the stored form is lowercase.
  const message = addressChallengeMessage({ operatorId, chainId, address: getAddress(lower), challengeId: id, expiresAt });
  await db.query(
    "insert into payout_address_challenges (id, operator_id, chain_id, address, message, expires_at) values ($1, $2, $3, $4, $5, $6)",
    [id, operatorId, chainId.toString(), lower, message, expiresAt.toISOString()]);
  return { id, operatorId, chainId, address: lower, message, expiresAt };
}

export interface PayoutAddress {
  operatorId: string;
  chainId: bigint;
  address: string;
  verifiedAt: Date;
  changed: boolean;
}

/**
 * Sets the operator's payout address on a chain, given the signature of an unexpired, unused
 * challenge issued for exactly this operator, chain and address. Every change is appended to
 * payout_address_events with who made it; setting the address it already has changes nothing.
 * Payouts already created keep the address they were created with.
 */
export async function setPayoutAddress(
  db: Database, settlements: Settlements,
  input: { operatorId: string; chainId: bigint; address: string; challengeId: string; signature: string; changedBy: string; requestId?: string },
): Promise<PayoutAddress> {
  settlements.requireAddressOn(input.chainId, input.address);
  const address = input.address.toLowerCase();
  if (!/^0x[0-9a-fA-F]{130}$/.test(input.signature)) {
    throw new LedgerError("invalid_request", "signature must be a 65-byte hex signature", [{ path: "signature", message: "invalid" }]);
  }
  return inTransaction(db, async (tx) => {
    const now = db.clock.now();
    const rows = await tx.query<{ operator_id: string; chain_id: string; address: string; message: string; expired: boolean; used_at: Date | null }>(
      "select operator_id, chain_id::text as chain_id, address, message, expires_at <= $2::timestamptz as expired, used_at from payout_address_challenges where id = $1 for update",
      [input.challengeId, now.toISOString()]);
    const ch = rows[0];
    if (!ch || ch.operator_id !== input.operatorId) throw new LedgerError("challenge_not_found", `challenge ${input.challengeId} does not exist for this operator`);
    const current = await tx.query<{ address: string; verified_at: Date | string }>(
      "select address, verified_at from payout_addresses where operator_id = $1 and chain_id = $2 for update", [input.operatorId, input.chainId.toString()]);
    if (ch.used_at !== null) {
      // A retry of the request that used it: the same answer.
      if (current[0]?.address === address && ch.address === address) {
        return { operatorId: input.operatorId, chainId: input.chainId, address, verifiedAt: new Date(current[0].verified_at), changed: false };
      }
      throw new LedgerError("challenge_invalid", "the challenge was used already: ask for a new one");
    }
    if (ch.expired) throw new LedgerError("challenge_invalid", "the challenge expired: ask for a new one");
    if (ch.chain_id !== input.chainId.toString() || ch.address !== address) {
      throw new LedgerError("challenge_invalid", "the challenge was issued for another chain or address", [{ path: "challengeId", message: "does not match chain_id and address" }]);
    }
    const valid = await verifyMessage({ address: address as `0x${string}`, message: ch.message, signature: input.signature as `0x${string}` }).catch(() => false);
    if (!valid) throw new LedgerError("signature_invalid", "the signature is not the address's signature of the challenge message", [{ path: "signature", message: "does not verify" }]);
    await tx.query("update payout_address_challenges set used_at = $2 where id = $1", [input.challengeId, now.toISOString()]);
    const old = current[0]?.address ?? null;
    await tx.query(
      `insert into payout_addresses (operator_id, chain_id, address, challenge_id, verified_at) values ($1, $2, $3, $4, $5)
       on conflict (operator_id, chain_id) do update set address = excluded.address, challenge_id = excluded.challenge_id, verified_at = excluded.verified_at`,
      [input.operatorId, input.chainId.toString(), address, input.challengeId, now.toISOString()]);
    await tx.query(
      `insert into payout_address_events (operator_id, chain_id, old_address, new_address, challenge_id, signature, changed_by, request_id, changed_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [input.operatorId, input.chainId.toString(), old, address, input.challengeId, input.signature, input.changedBy, input.requestId ?? null, now.toISOString()]);
    return { operatorId: input.operatorId, chainId: input.chainId, address, verifiedAt: now, changed: old !== address };
  });
}

export async function listPayoutAddresses(db: Queryable, operatorId: string) {
  const current = await db.query<{ chain_id: string; address: string; verified_at: Date | string }>(
    "select chain_id::text as chain_id, address, verified_at from payout_addresses where operator_id = $1 order by chain_id", [operatorId]);
  const history = await db.query<{ chain_id: string; old_address: string | null; new_address: string; changed_by: string; changed_at: Date | string; request_id: string | null }>(
    `select chain_id::text as chain_id, old_address, new_address, changed_by, changed_at, request_id from payout_address_events
      where operator_id = $1 order by id desc limit 100`, [operatorId]);
  return { current, history };
}
