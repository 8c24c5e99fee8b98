import { z } from "zod";
import {
  insertCapacityVersion,
  listCapacityFlagRows,
  listCapacityPolicyRows,
  listCapacityRows,
  lockOperatorForCapacity,
  replaceCapacityPolicies,
  type FlagRow,
  type PolicyRow,
} from "../db/queries/capacity.js";
import type { CapacityVersion } from "../domain/capacity.js";
import { LedgerError } from "../domain/errors.js";
import type { Queryable } from "./context.js";
import { toVersion } from "./ingest-usage/capacity.js";
import { getMarketplace } from "./marketplaces.js";
import { inTransaction } from "./transaction.js";
import { parseInput } from "./validation.js";

/** A machine class as usage records name it (exactly: capacity of gpu:h100 is not capacity of gpu:h100-80gb). */
export const Resource = z.string().regex(/^[a-z0-9][a-z0-9:._-]{0,99}$/, "must be 1-100 characters of a-z, 0-9, ':', '.', '_' or '-'");

/** Most units of one resource an operator may declare: far beyond any one operator's fleet, well inside an integer. */
export const MAX_UNITS = 10_000_000;

const CapacityInput = z
  .strictObject({
    operatorId: z.string(),
    resource: Resource,
    units: z.number().int().min(0).max(MAX_UNITS),
    effectiveFrom: z.date(),
    until: z.date().nullable(),
    by: z.string(),
    now: z.date(),
  })
  .refine((v) => v.until === null || v.until.getTime() > v.effectiveFrom.getTime(), { message: "must be after effective_from", path: ["until"] });

export interface CapacityDeclaration extends CapacityVersion {
  operatorId: string;
  declaredBy: string;
  createdAt: Date;
}

/**
 * Declares the next version of an operator's capacity of a resource: `units` from `effectiveFrom`
 * (until `until`, or until a later version). Versions are never changed; history is kept. Another
 * version of the resource taking effect at the same instant is refused (capacity_exists).
 */
export async function declareCapacity(db: Queryable, raw: z.input<typeof CapacityInput>): Promise<CapacityDeclaration> {
  const input = parseInput(CapacityInput, raw);
  return inTransaction(db, async (tx) => {
    if (!(await lockOperatorForCapacity(tx, input.operatorId))) throw new LedgerError("operator_not_found", `operator ${input.operatorId} does not exist`);
    const row = await insertCapacityVersion(tx, { ...input, at: input.now });
    if (!row)
      throw new LedgerError("capacity_exists", `a capacity version of ${input.resource} taking effect at ${input.effectiveFrom.toISOString()} exists already`, [
        { path: "effectiveFrom", message: "a version of this resource takes effect at this instant already: declare a new one from another instant" },
      ]);
    return { ...toVersion(row), operatorId: row.operator_id, declaredBy: row.declared_by, createdAt: new Date(row.created_at) };
  });
}

/** Every version of the operator's capacity (of one resource, when given), by resource then version. */
export async function listCapacity(db: Queryable, operatorId: string, resource?: string): Promise<CapacityDeclaration[]> {
  return (await listCapacityRows(db, operatorId, resource)).map((row) => ({
    ...toVersion(row),
    operatorId: row.operator_id,
    declaredBy: row.declared_by,
    createdAt: new Date(row.created_at),
  }));
}

/** The operator's capacity versions by resource: what its utilisation is measured against. */
export async function capacityByResource(db: Queryable, operatorId: string): Promise<Map<string, CapacityVersion[]>> {
  const out = new Map<string, CapacityVersion[]>();
  for (const row of await listCapacityRows(db, operatorId)) out.set(row.resource, [...(out.get(row.resource) ?? []), toVersion(row)]);
  return out;
}

export type CapacityPolicy = "refuse" | "flag";

export interface CapacityPolicies {
  marketplaceId: string;
  /** For every resource without a policy of its own. */
  default: CapacityPolicy;
  resources: Record<string, CapacityPolicy>;
  updatedBy: string | null;
  updatedAt: Date | null;
}

function policiesOf(marketplaceId: string, rows: PolicyRow[]): CapacityPolicies {
  const last = [...rows].sort((a, b) => new Date(b.updated_at).getTime() - new Date(a.updated_at).getTime())[0];
  return {
    marketplaceId,
    default: rows.find((r) => r.resource === "*")?.policy ?? "refuse",
    resources: Object.fromEntries(rows.filter((r) => r.resource !== "*").map((r) => [r.resource, r.policy])),
    updatedBy: last?.updated_by ?? null,
    updatedAt: last ? new Date(last.updated_at) : null,
  };
}

export async function getCapacityPolicies(db: Queryable, marketplaceId: string): Promise<CapacityPolicies | undefined> {
  if (!(await getMarketplace(db, marketplaceId))) return undefined;
  return policiesOf(marketplaceId, await listCapacityPolicyRows(db, marketplaceId));
}

/** Replaces what a marketplace does with usage beyond capacity: a default and per-resource exceptions. */
export async function setCapacityPolicies(
  tx: Queryable,
  s: { marketplaceId: string; default: CapacityPolicy; resources: Record<string, CapacityPolicy>; by: string; now: Date },
): Promise<CapacityPolicies> {
  if (!(await getMarketplace(tx, s.marketplaceId))) throw new LedgerError("marketplace_not_found", `marketplace ${s.marketplaceId} does not exist`);
  const rows = [{ resource: "*", policy: s.default }, ...Object.entries(s.resources).map(([resource, policy]) => ({ resource, policy }))];
  await replaceCapacityPolicies(tx, s.marketplaceId, rows, s.by, s.now);
  return (await getCapacityPolicies(tx, s.marketplaceId))!;
}

/** A marketplace's records accepted beyond capacity, newest first (a page, read with limit + 1). */
export function listCapacityFlags(db: Queryable, marketplaceId: string, limit: number, after?: { at: string; id: string }): Promise<FlagRow[]> {
  return listCapacityFlagRows(db, marketplaceId, limit + 1, after);
}
