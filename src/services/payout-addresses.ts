import { getAddress, verifyMessage } from "viem";
import type { Settlements } from "../chain/settlement.js";
import type { Database, Queryable } from "../db/client.js";
import {
  insertAddressChallenge,
  insertPayoutAddressEvent,
  listCurrentPayoutAddresses,
  listPayoutAddressEvents,
  lockAddressChallenge,
  lockCurrentPayoutAddress,
  markAddressChallengeUsed,
  upsertPayoutAddress,
} from "../db/queries/payout-addresses.js";
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
export async function issueAddressChallenge(
  db: Queryable,
  settlements: Settlements,
  { operatorId, chainId, address, now }: { operatorId: string; chainId: bigint; address: string; now: Date },
): Promise<AddressChallenge> {
  settlements.requireAddressOn(chainId, address);
  if (!(await getOperator(db, operatorId))) throw new LedgerError("operator_not_found", `operator ${operatorId} does not exist`);
  const id = uuidv7(now.getTime());
  const expiresAt = new Date(Math.floor(now.getTime() / 1000) * 1000 + CHALLENGE_TTL_SECONDS * 1000);
  const lower = address.toLowerCase();
  // The checksummed form is what wallets show; the stored form is lowercase.
  const message = addressChallengeMessage({ operatorId, chainId, address: getAddress(lower), challengeId: id, expiresAt });
  await insertAddressChallenge(db, { id, operatorId, chainId, address: lower, message, expiresAt });
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
  db: Database | Queryable,
  settlements: Settlements,
  input: { operatorId: string; chainId: bigint; address: string; challengeId: string; signature: string; changedBy: string; requestId?: string },
  now: Date = (db as Database).clock.now(),
): Promise<PayoutAddress> {
  settlements.requireAddressOn(input.chainId, input.address);
  const address = input.address.toLowerCase();
  if (!/^0x[0-9a-fA-F]{130}$/.test(input.signature)) {
    throw new LedgerError("invalid_request", "signature must be a 65-byte hex signature", [{ path: "signature", message: "invalid" }]);
  }
  return inTransaction(db, async (tx) => {
    const ch = await lockAddressChallenge(tx, input.challengeId, now);
    if (!ch || ch.operator_id !== input.operatorId)
      throw new LedgerError("challenge_not_found", `challenge ${input.challengeId} does not exist for this operator`);
    const current = await lockCurrentPayoutAddress(tx, input.operatorId, input.chainId);
    if (ch.used_at !== null) {
      // A retry of the request that used it: the same answer.
      if (current?.address === address && ch.address === address) {
        return { operatorId: input.operatorId, chainId: input.chainId, address, verifiedAt: new Date(current.verified_at), changed: false };
      }
      throw new LedgerError("challenge_invalid", "the challenge was used already: ask for a new one");
    }
    if (ch.expired) throw new LedgerError("challenge_invalid", "the challenge expired: ask for a new one");
    if (ch.chain_id !== input.chainId.toString() || ch.address !== address) {
      throw new LedgerError("challenge_invalid", "the challenge was issued for another chain or address", [
        { path: "challengeId", message: "does not match chain_id and address" },
      ]);
    }
    const valid = await verifyMessage({ address: address as `0x${string}`, message: ch.message, signature: input.signature as `0x${string}` }).catch(
      () => false,
    );
    if (!valid)
      throw new LedgerError("signature_invalid", "the signature is not the address's signature of the challenge message", [
        { path: "signature", message: "does not verify" },
      ]);
    await markAddressChallengeUsed(tx, input.challengeId, now);
    const old = current?.address ?? null;
    await upsertPayoutAddress(tx, { operatorId: input.operatorId, chainId: input.chainId, address, challengeId: input.challengeId, verifiedAt: now });
    await insertPayoutAddressEvent(tx, {
      operatorId: input.operatorId,
      chainId: input.chainId,
      oldAddress: old,
      newAddress: address,
      challengeId: input.challengeId,
      signature: input.signature,
      changedBy: input.changedBy,
      requestId: input.requestId ?? null,
      changedAt: now,
    });
    return { operatorId: input.operatorId, chainId: input.chainId, address, verifiedAt: now, changed: old !== address };
  });
}

export async function listPayoutAddresses(db: Queryable, operatorId: string) {
  const current = await listCurrentPayoutAddresses(db, operatorId);
  const history = await listPayoutAddressEvents(db, operatorId);
  return { current, history };
}
