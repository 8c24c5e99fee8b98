import type { Queryable } from "../db/client.js";
import { sweepLocks } from "../db/queries/rate-locks.js";
import { withheldEarnings } from "./funding.js";

/**
 * Keeps an operator's open rate locks from `assetId` within the earnings they can still be used for
 * (src/db/queries/rate-locks.ts sweepLocks; docs/settlement.md, "Rate policy"). What is withheld is
 * read first: usage posted meanwhile is then counted in the balance but not withheld, which releases
 * less, never a lock an honest operator still needs; the next sweep releases the rest.
 */
export async function sweepRateLocks(tx: Queryable, operatorId: string, assetId: string): Promise<void> {
  const w = await withheldEarnings(tx, operatorId, assetId);
  await sweepLocks(tx, operatorId, assetId, w.awaiting.total + w.receivable);
}
