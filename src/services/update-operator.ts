import type { z } from "zod";
import type { Queryable } from "../db/client.js";
import { updateOperatorRow } from "../db/queries/party-updates.js";
import { LedgerError } from "../domain/errors.js";
import { getOperator, type Operator } from "./marketplaces.js";
import { inTransaction } from "./transaction.js";
import { DescriptionChange } from "./update-marketplace.js";
import { parseInput } from "./validation.js";

/**
 * Renames an operator or replaces its metadata (admin, the operator itself). The operator is one
 * for every marketplace it sells through: a marketplace does not rename it. A marketplace that
 * registers it again names it by its new name.
 */
export async function updateOperator(db: Queryable, { id, change: raw }: { id: string; change: z.input<typeof DescriptionChange> }): Promise<Operator> {
  const change = parseInput(DescriptionChange, raw);
  return inTransaction(db, async (tx) => {
    if (!(await updateOperatorRow(tx, id, change))) throw new LedgerError("operator_not_found", `operator ${id} does not exist`);
    return (await getOperator(tx, id))!;
  });
}
