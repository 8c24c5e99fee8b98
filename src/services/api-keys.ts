import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { LedgerError } from "../domain/errors.js";
import { uuidv7 } from "../domain/ids.js";
import type { Queryable } from "../db/client.js";
import { findActiveKeyByPrefix, insertApiKey, markApiKeyRevoked } from "../db/queries/api-keys.js";
import { lockKeyForRevocation } from "../db/queries/key-guard.js";
import { type ApiKey, type Principal } from "../domain/access.js";
import { getMarketplace, getOperator } from "./marketplaces.js";
import { parseInput } from "./validation.js";

/**
 * API keys look like `lk_<prefix>_<secret>`: the prefix (16 hex) finds the row, the secret (256 random
 * bits) is checked against its stored SHA-256 in constant time. The secret is never stored or logged.
 */
const KEY_FORMAT = /^lk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

const sha256 = (text: string) => createHash("sha256").update(text).digest();

export const ApiKeyInput = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .max(100)
      .regex(/^[^\u0000]*$/, "must not contain NUL characters"),
    role: z.enum(["admin", "finance", "marketplace", "operator"]),
    scopeId: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, "must be the id of an existing marketplace or operator")
      .optional(),
  })
  .refine((k) => (k.scopeId !== undefined) === (k.role === "marketplace" || k.role === "operator"), {
    message: "marketplace and operator keys need the id they act for; admin and finance keys take none",
    path: ["scopeId"],
  });
export type ApiKeyInput = z.input<typeof ApiKeyInput>;

/** Creates a key; the returned secret is shown once and cannot be recovered. */
export async function createApiKey(
  db: Queryable,
  { createdBy = null, ...raw }: ApiKeyInput & { createdBy?: string | null },
): Promise<ApiKey & { secret: string }> {
  const input = parseInput(ApiKeyInput, raw);
  // A key for a tenant that does not exist yet would gain its data the day someone creates it.
  if (input.role === "marketplace" && !(await getMarketplace(db, input.scopeId!))) {
    throw new LedgerError("marketplace_not_found", `marketplace ${input.scopeId} does not exist`, [{ path: "scopeId", message: "does not exist" }]);
  }
  if (input.role === "operator" && !(await getOperator(db, input.scopeId!))) {
    throw new LedgerError("operator_not_found", `operator ${input.scopeId} does not exist`, [{ path: "scopeId", message: "does not exist" }]);
  }
  const prefix = randomBytes(8).toString("hex");
  const secret = `lk_${prefix}_${randomBytes(32).toString("base64url")}`;
  const key = await insertApiKey(db, {
    id: uuidv7(),
    prefix,
    secretHash: sha256(secret).toString("hex"),
    name: input.name,
    role: input.role,
    scopeId: input.scopeId ?? null,
    createdBy,
  });
  return { ...key, secret };
}

/** Revokes a key at once (at the service clock's `at`), in the caller's transaction; revoking it again changes nothing. */
export async function revokeApiKey(db: Queryable, { id, at, by }: { id: string; at: Date; by: string }): Promise<ApiKey> {
  // Waits for the writes under way with the key; none commits after this one (src/db/queries/key-guard.ts).
  await lockKeyForRevocation(db, id, by);
  const key = await markApiKeyRevoked(db, id, at);
  if (!key) throw new LedgerError("invalid_request", `api key ${id} does not exist`, [{ path: "id", message: "does not exist" }]);
  return key;
}

/**
 * Resolves a bearer token to its principal, or undefined. The bootstrap admin key from the
 * environment is compared by hash too, so its length does not leak through timing.
 */
export async function authenticate(db: Queryable, token: string, bootstrapAdminKey?: string): Promise<Principal | undefined> {
  if (bootstrapAdminKey && timingSafeEqual(sha256(token), sha256(bootstrapAdminKey))) {
    return { keyId: "bootstrap-admin", role: "admin", scopeId: null };
  }
  const match = KEY_FORMAT.exec(token);
  if (!match) return undefined;
  const key = await findActiveKeyByPrefix(db, match[1]!);
  if (!key || !timingSafeEqual(sha256(token), Buffer.from(key.secretHash, "hex"))) return undefined;
  return { keyId: key.id, role: key.role, scopeId: key.scopeId };
}
