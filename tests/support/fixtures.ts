import type { Database } from "../../src/db/client.js";
import { createAccount, type AccountInput } from "../../src/services/create-account.js";
import { createAsset } from "../../src/services/create-asset.js";

let n = 0;

/** An off-chain asset with a unique code. */
export async function anAsset(db: Database, scale = 6) {
  return createAsset(db, { code: `TST${++n}${Date.now() % 100000}`, scale, settlement: { kind: "offchain" } });
}

/** A credit-normal account (a liability such as a customer's funds or an operator's payable). */
export async function anAccount(db: Database, assetId: string, extra: Partial<AccountInput> = {}) {
  return createAccount(db, { assetId, code: "test", normalSide: "credit", ...extra });
}

/** A credit account that can never go below zero. */
export const noOverdraft = (db: Database, assetId: string, extra: Partial<AccountInput> = {}) =>
  anAccount(db, assetId, { debitsMustNotExceedCredits: true, ...extra });
