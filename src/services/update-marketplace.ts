import { z } from "zod";
import type { Queryable } from "../db/client.js";
import { updateMarketplaceRow } from "../db/queries/party-updates.js";
import { LedgerError } from "../domain/errors.js";
import { getMarketplace, PartyName, type Party } from "./marketplaces.js";
import { inTransaction } from "./transaction.js";
import { parseInput } from "./validation.js";

/** What describes a party and may change: its name and its metadata (replaced as a whole). Nothing money depends on. */
export const DescriptionChange = z
  .strictObject({ name: PartyName.optional(), metadata: z.record(z.string(), z.unknown()).optional() })
  .refine((c) => c.name !== undefined || c.metadata !== undefined, { message: "give at least one of name and metadata", path: ["(body)"] });

/** Renames a marketplace or replaces its metadata. Who may is the route's to decide (admin, the marketplace itself). */
export async function updateMarketplace(db: Queryable, { id, change: raw }: { id: string; change: z.input<typeof DescriptionChange> }): Promise<Party> {
  const change = parseInput(DescriptionChange, raw);
  return inTransaction(db, async (tx) => {
    if (!(await updateMarketplaceRow(tx, id, change))) throw new LedgerError("marketplace_not_found", `marketplace ${id} does not exist`);
    return (await getMarketplace(tx, id))!;
  });
}
