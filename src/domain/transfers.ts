import { canonicalJson, sha256Hex } from "./canonical.js";
import { LedgerError, type FieldIssue } from "./errors.js";
import { isUuid } from "./ids.js";
import { UINT256_MAX } from "./money.js";

export interface LegInput {
  debitAccountId: string;
  creditAccountId: string;
  amount: bigint;
}

interface Common {
  /** Client key: same key and same request replays the original result; a different request conflicts. */
  idempotencyKey: string;
  /** Optional client-chosen id (uuid); generated when absent. */
  id?: string;
  /** When it happened in the world; defaults to when it is recorded (a reversal: to the original's). */
  effectiveAt?: Date;
  metadata?: Record<string, unknown>;
}

export type TransferInput =
  | (Common & { kind: "standard"; legs: LegInput[] })
  | (Common & { kind: "pending"; legs: LegInput[]; timeoutSeconds?: number })
  | (Common & { kind: "post_pending"; pendingId: string; amount?: bigint })
  | (Common & { kind: "void_pending"; pendingId: string })
  /** Issued by the hold expirer once timeout_at has passed. */
  | (Common & { kind: "expire_pending"; pendingId: string })
  | (Common & { kind: "reversal"; reversesId: string });

export type TransferKind = TransferInput["kind"];

export const MAX_LEGS = 64;
export const MAX_TIMEOUT_SECONDS = 366 * 24 * 3600;
/** Room for an API caller's 255-character key plus the tenant and item it is scoped to. */
export const MAX_KEY_LENGTH = 512;
export const MAX_METADATA_BYTES = 16 * 1024;

/** Checks the shape of a request without touching state. Throws LedgerError("invalid_request"). */
export function validateTransferInput(input: TransferInput): void {
  const issues: FieldIssue[] = [];
  const issue = (path: string, message: string) => issues.push({ path, message });

  if (typeof input.idempotencyKey !== "string" || input.idempotencyKey.length === 0) {
    issue("idempotencyKey", "is required");
  } else if (input.idempotencyKey.length > MAX_KEY_LENGTH) {
    issue("idempotencyKey", `must be at most ${MAX_KEY_LENGTH} characters`);
  } else if (input.idempotencyKey.includes("\u0000")) {
    issue("idempotencyKey", "must not contain NUL characters");
  }
  if (input.id !== undefined && !isUuid(input.id)) issue("id", "must be a lowercase uuid");
  if (input.effectiveAt !== undefined && !(input.effectiveAt instanceof Date && !isNaN(input.effectiveAt.getTime()))) {
    issue("effectiveAt", "must be a valid date");
  }
  if (input.metadata !== undefined) {
    if (typeof input.metadata !== "object" || input.metadata === null || Array.isArray(input.metadata)) {
      issue("metadata", "must be an object");
    } else {
      const json = safeStringify(input.metadata);
      if (json === undefined) issue("metadata", "must be plain JSON (strings, numbers, booleans, null, arrays, objects)");
      else if (Buffer.byteLength(json) > MAX_METADATA_BYTES) issue("metadata", `must be at most ${MAX_METADATA_BYTES} bytes as JSON`);
      // PostgreSQL's jsonb cannot store the NUL character.
      else if (json.includes("\\u0000")) issue("metadata", "must not contain NUL characters");
    }
  }

  switch (input.kind) {
    case "standard":
    case "pending":
      validateLegs(input.legs, issue);
      if (input.kind === "pending" && input.timeoutSeconds !== undefined) {
        const t = input.timeoutSeconds;
        if (!Number.isInteger(t) || t <= 0 || t > MAX_TIMEOUT_SECONDS) {
          issue("timeoutSeconds", `must be a whole number of seconds from 1 to ${MAX_TIMEOUT_SECONDS}`);
        }
      }
      break;
    case "post_pending":
      if (input.amount !== undefined) checkAmount(input.amount, "amount", issue);
    // fallthrough
    case "void_pending":
    case "expire_pending":
      if (!isUuid(input.pendingId)) issue("pendingId", "must be a uuid");
      break;
    case "reversal":
      if (!isUuid(input.reversesId)) issue("reversesId", "must be a uuid");
      break;
    default:
      issue("kind", "must be one of standard, pending, post_pending, void_pending, reversal");
  }

  if (issues.length > 0) {
    throw new LedgerError("invalid_request", issues.map((i) => `${i.path} ${i.message}`).join("; "), issues);
  }
}

function validateLegs(legs: unknown, issue: (path: string, message: string) => void): void {
  if (!Array.isArray(legs) || legs.length === 0) return issue("legs", "must hold at least one leg");
  if (legs.length > MAX_LEGS) return issue("legs", `must hold at most ${MAX_LEGS} legs`);
  legs.forEach((leg: LegInput, i) => {
    if (!isUuid(leg.debitAccountId)) issue(`legs.${i}.debitAccountId`, "must be a uuid");
    if (!isUuid(leg.creditAccountId)) issue(`legs.${i}.creditAccountId`, "must be a uuid");
    if (leg.debitAccountId === leg.creditAccountId) issue(`legs.${i}`, "must debit and credit different accounts");
    checkAmount(leg.amount, `legs.${i}.amount`, issue);
  });
}

function checkAmount(amount: unknown, path: string, issue: (path: string, message: string) => void): void {
  if (typeof amount !== "bigint") issue(path, "must be an integer amount (bigint) in the asset's smallest unit");
  else if (amount <= 0n) issue(path, "must be greater than zero");
  else if (amount > UINT256_MAX) issue(path, "must not exceed 2^256 - 1");
}

const derivedHashes = new WeakMap<TransferInput, string>();

/**
 * Gives a request the fingerprint its maker derived from what it was built from, instead of the
 * canonical JSON of the request: a usage transfer's is its usage record's content hash (the
 * transfer is a function of the record, so the record's hash already tells its repeats from its
 * conflicts), which spares hashing every record twice.
 */
export function withRequestHash<T extends TransferInput>(input: T, hash: string): T {
  derivedHashes.set(input, hash);
  return input;
}

/** Fingerprint of what the request asks for (everything but its idempotency key), or the one its maker derived (`withRequestHash`). */
export function requestHash(input: TransferInput): string {
  const derived = derivedHashes.get(input);
  if (derived !== undefined) return derived;
  const { idempotencyKey: _key, ...rest } = input;
  return sha256Hex(canonicalJson(rest));
}

function safeStringify(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}
