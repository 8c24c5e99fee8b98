import { z } from "zod";
import { LedgerError } from "../domain/errors.js";
import { uuidv7 } from "../domain/ids.js";
import type { Database, Queryable } from "../db/client.js";
import { findAccountByRef, insertAccount, insertAccountBalances } from "../db/queries/accounts.js";
import { type Account } from "../domain/accounts.js";
import { refuseRetiredAsset } from "../domain/assets.js";
import { getAsset } from "../db/queries/assets.js";
import { isReservedRef } from "../domain/chart.js";
import { inTransaction } from "./transaction.js";
import { parseInput } from "./validation.js";

const shortText = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[^\u0000]*$/, "must not contain NUL characters");

export const AccountInput = z
  .strictObject({
    id: z.uuid().optional(),
    assetId: z.uuid(),
    ref: shortText.optional(),
    code: z.string().regex(/^[a-z][a-z0-9_.:-]{0,63}$/, "must be 1-64 characters of a-z, 0-9, '_', '.', ':' or '-', starting with a letter"),
    marketplaceId: shortText.optional(),
    ownerType: shortText.optional(),
    ownerId: shortText.optional(),
    normalSide: z.enum(["debit", "credit"]),
    debitsMustNotExceedCredits: z.boolean().default(false),
    creditsMustNotExceedDebits: z.boolean().default(false),
    metadata: z.record(z.string(), z.unknown()).default({}),
  })
  .refine((a) => !(a.debitsMustNotExceedCredits && a.creditsMustNotExceedDebits), {
    message: "an account can have at most one of debitsMustNotExceedCredits and creditsMustNotExceedDebits",
    path: ["creditsMustNotExceedDebits"],
  });
export type AccountInput = z.input<typeof AccountInput>;

/**
 * Opens an account with zero balances. With a `ref`, creation is idempotent: the same ref and
 * attributes return the existing account; the same ref with other attributes is account_exists.
 */
export async function createAccount(db: Database | Queryable, raw: AccountInput): Promise<Account> {
  const input = parseInput(AccountInput, raw);
  const metadataJson = JSON.stringify(input.metadata);
  if (metadataJson.includes("\\u0000")) {
    throw new LedgerError("invalid_request", "metadata must not contain NUL characters", [{ path: "metadata", message: "must not contain NUL characters" }]);
  }
  if (input.ref !== undefined && isReservedRef(input.ref)) {
    throw new LedgerError(
      "invalid_request",
      `ref ${input.ref} is reserved for the service's own accounts (customer:, operator:, hold:, deposits:, payouts:, treasury:, expense:, protocol:, *:fees); choose another`,
      [{ path: "ref", message: "is reserved for the service's own accounts" }],
    );
  }
  return inTransaction(db, async (tx) => {
    const asset = await getAsset(tx, input.assetId);
    if (!asset) throw new LedgerError("asset_not_found", `asset ${input.assetId} does not exist`, [{ path: "assetId", message: "does not exist" }]);
    refuseRetiredAsset(asset);
    const created = await insertAccount(tx, {
      id: input.id ?? uuidv7(),
      assetId: input.assetId,
      ref: input.ref ?? null,
      code: input.code,
      ownerType: input.ownerType ?? null,
      ownerId: input.ownerId ?? null,
      normalSide: input.normalSide,
      debitsMustNotExceedCredits: input.debitsMustNotExceedCredits,
      creditsMustNotExceedDebits: input.creditsMustNotExceedDebits,
      metadataJson,
      marketplaceId: input.marketplaceId ?? null,
    });
    if (created) {
      await insertAccountBalances(tx, created.id);
      return created;
    }
    const existing = input.ref === undefined ? undefined : await findAccountByRef(tx, input.assetId, input.marketplaceId ?? null, input.ref);
    if (existing && sameAccount(existing, input)) return existing;
    throw new LedgerError(
      "account_exists",
      existing ? `account ${input.ref} already exists with different attributes` : `account id ${input.id} is already taken`,
    );
  });
}

function sameAccount(a: Account, input: z.output<typeof AccountInput>): boolean {
  return (
    (input.id === undefined || input.id === a.id) &&
    a.code === input.code &&
    a.marketplaceId === (input.marketplaceId ?? null) &&
    a.ownerType === (input.ownerType ?? null) &&
    a.ownerId === (input.ownerId ?? null) &&
    a.normalSide === input.normalSide &&
    a.debitsMustNotExceedCredits === input.debitsMustNotExceedCredits &&
    a.creditsMustNotExceedDebits === input.creditsMustNotExceedDebits
  );
}
