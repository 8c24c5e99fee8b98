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
  lastAddressChange,
  lockOperatorAddresses,
  operatorIsNew,
  upsertPayoutAddress,
} from "../db/queries/payout-addresses.js";
import type { Principal } from "../domain/access.js";
import { LedgerError } from "../domain/errors.js";
import { uuidv7 } from "../domain/ids.js";
import { addressChallengeMessage } from "../domain/payouts.js";
import { getOperator } from "./marketplaces.js";
import { inTransaction } from "./transaction.js";
import { proposePayoutAddress } from "./proposals/propose-payout-address.js";
import type { Proposal } from "./proposals/proposal.js";

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

export interface PayoutAddressInput {
  operatorId: string;
  chainId: bigint;
  address: string;
  challengeId: string;
  signature: string;
  /** The current address's signature of the same challenge message: its holder agrees to the change. */
  currentAddressSignature?: string;
  by: Principal;
  requestId?: string;
}

/** The address was set, or the change waits for a second key's approval. */
export type PayoutAddressOutcome = { kind: "set"; address: PayoutAddress } | { kind: "proposed"; proposal: Proposal };

const SIGNATURE = /^0x[0-9a-fA-F]{130}$/;

/**
 * Sets the operator's payout address on a chain, given the signature of an unexpired, unused
 * challenge issued for exactly this operator, chain and address. Every change is appended to
 * payout_address_events with who made it; setting the address it already has changes nothing.
 * Payouts already created keep the address they were created with.
 *
 * Where an operator is paid decides where its money goes, so one key may not move it on its own
 * word (docs/payouts.md, "Who decides where an operator is paid"). The change takes effect at once
 * only when a holder of the operator's payout address agrees (`currentAddressSignature`: its
 * address on this chain, or on another chain for a first address here), or when the operator is
 * new (never had an address, never earned) and sets it with its own key. Anything else (an admin's
 * change, a lost wallet, an operator that earned before it set an address) becomes a
 * `payout_address` proposal that an independent key approves. Changes of one operator's addresses
 * are serialized on its row.
 */
export async function setPayoutAddress(
  db: Database | Queryable,
  settlements: Settlements,
  input: PayoutAddressInput,
  now: Date = (db as Database).clock.now(),
): Promise<PayoutAddressOutcome> {
  settlements.requireAddressOn(input.chainId, input.address);
  const address = input.address.toLowerCase();
  for (const [path, sig] of [
    ["signature", input.signature],
    ["current_address_signature", input.currentAddressSignature],
  ] as const) {
    if (sig !== undefined && !SIGNATURE.test(sig)) {
      throw new LedgerError("invalid_request", `${path} must be a 65-byte hex signature`, [{ path, message: "invalid" }]);
    }
  }
  return inTransaction(db, async (tx) => {
    await lockOperatorAddresses(tx, input.operatorId);
    const ch = await lockAddressChallenge(tx, input.challengeId, now);
    if (!ch || ch.operator_id !== input.operatorId)
      throw new LedgerError("challenge_not_found", `challenge ${input.challengeId} does not exist for this operator`);
    const current = await lockCurrentPayoutAddress(tx, input.operatorId, input.chainId);
    const verifiedAt = new Date(current?.verified_at ?? now);
    const unchanged = { kind: "set" as const, address: { operatorId: input.operatorId, chainId: input.chainId, address, verifiedAt, changed: false } };
    if (ch.used_at !== null) {
      // A retry of the request that used it: the same answer.
      if (current?.address === address && ch.address === address) return unchanged;
      throw new LedgerError("challenge_invalid", "the challenge was used already: ask for a new one");
    }
    if (ch.expired) throw new LedgerError("challenge_invalid", "the challenge expired: ask for a new one");
    if (ch.chain_id !== input.chainId.toString() || ch.address !== address) {
      throw new LedgerError("challenge_invalid", "the challenge was issued for another chain or address", [
        { path: "challengeId", message: "does not match chain_id and address" },
      ]);
    }
    if (!(await signedBy(address, ch.message, input.signature)))
      throw new LedgerError("signature_invalid", "the signature is not the address's signature of the challenge message", [
        { path: "signature", message: "does not verify" },
      ]);
    await markAddressChallengeUsed(tx, input.challengeId, now);
    const old = current?.address ?? null;
    if (old === address) return unchanged;
    const change: AddressChange = { ...input, address, oldAddress: old, changedBy: input.by.keyId, requestId: input.requestId ?? null };
    if (await mayChangeAlone(tx, input, old, ch.message)) return { kind: "set", address: await applyAddressChange(tx, change, now) };
    const payload = {
      operator_id: input.operatorId,
      chain_id: input.chainId.toString(),
      // The state the proposal is made against: any change since (even back to this address) outdates it.
      last_change_id: await lastAddressChange(tx, input.operatorId, input.chainId),
      old_address: old,
      new_address: address,
      challenge_id: input.challengeId,
      signature: input.signature,
    };
    return { kind: "proposed", proposal: await proposePayoutAddress(tx, now, input.by, payload) };
  });
}

const signedBy = (address: string, message: string, signature: string) =>
  verifyMessage({ address: address as `0x${string}`, message, signature: signature as `0x${string}` }).catch(() => false);

/**
 * Whether the change needs no second key: a holder of the operator's payout address agrees (its
 * address on this chain, or, for a first address on this chain, its address on another chain), or
 * the operator is new (never had an address, never earned) and sets it with its own key.
 */
async function mayChangeAlone(tx: Queryable, input: PayoutAddressInput, old: string | null, message: string): Promise<boolean> {
  const holders = old !== null ? [old] : (await listCurrentPayoutAddresses(tx, input.operatorId)).map((a) => a.address);
  if (input.currentAddressSignature !== undefined) {
    for (const holder of new Set(holders)) if (await signedBy(holder, message, input.currentAddressSignature)) return true;
    throw new LedgerError(
      "signature_invalid",
      holders.length === 0
        ? "current_address_signature was sent, but the operator has no payout address yet to agree"
        : "current_address_signature is not the signature of the challenge message by the operator's current payout address (on this chain, or for a first address here, on another chain)",
      [{ path: "current_address_signature", message: "does not verify" }],
    );
  }
  const own = input.by.role === "operator" && input.by.scopeId === input.operatorId;
  return own && holders.length === 0 && (await operatorIsNew(tx, input.operatorId));
}

interface AddressChange {
  operatorId: string;
  chainId: bigint;
  address: string;
  oldAddress: string | null;
  challengeId: string;
  signature: string;
  changedBy: string;
  requestId: string | null;
}

/** Makes `address` the operator's payout address on the chain and appends the change to its history. */
async function applyAddressChange(tx: Queryable, c: AddressChange, now: Date): Promise<PayoutAddress> {
  await upsertPayoutAddress(tx, { operatorId: c.operatorId, chainId: c.chainId, address: c.address, challengeId: c.challengeId, verifiedAt: now });
  await insertPayoutAddressEvent(tx, {
    operatorId: c.operatorId,
    chainId: c.chainId,
    oldAddress: c.oldAddress,
    newAddress: c.address,
    challengeId: c.challengeId,
    signature: c.signature,
    changedBy: c.changedBy,
    requestId: c.requestId,
    changedAt: now,
  });
  return { operatorId: c.operatorId, chainId: c.chainId, address: c.address, verifiedAt: now, changed: true };
}

/**
 * Carries out an approved `payout_address` proposal: only while the operator's address on the chain
 * is still the one the proposal was made against (a change made meanwhile makes it outdated).
 */
export async function applyPayoutAddressProposal(tx: Queryable, p: Proposal, at: Date): Promise<Record<string, unknown>> {
  const q = p.payload as Record<string, string | null>;
  const chainId = BigInt(q.chain_id!);
  await lockOperatorAddresses(tx, q.operator_id!);
  const current = await lockCurrentPayoutAddress(tx, q.operator_id!, chainId);
  const changed = (await lastAddressChange(tx, q.operator_id!, chainId)) !== q.last_change_id;
  if (changed || (current?.address ?? null) !== q.old_address) {
    throw new LedgerError(
      "proposal_outdated",
      `the operator's payout address on chain ${q.chain_id} changed since proposal ${p.id} was made: reject it, and propose again if the change is still wanted`,
    );
  }
  const change = {
    operatorId: q.operator_id!,
    chainId,
    address: q.new_address!,
    oldAddress: q.old_address ?? null,
    challengeId: q.challenge_id!,
    signature: q.signature!,
    changedBy: p.proposedBy,
    requestId: null,
  };
  const a = await applyAddressChange(tx, change, at);
  return { operator_id: a.operatorId, chain_id: q.chain_id, address: a.address, verified_at: at.toISOString() };
}

export async function listPayoutAddresses(db: Queryable, operatorId: string) {
  const current = await listCurrentPayoutAddresses(db, operatorId);
  const history = await listPayoutAddressEvents(db, operatorId);
  return { current, history };
}
