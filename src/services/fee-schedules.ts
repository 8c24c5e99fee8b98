import { z } from "zod";
import { LedgerError } from "../domain/errors.js";
import { parseUnits } from "../domain/money.js";
import type { ConfiguredRule } from "../domain/rating.js";
import type { Database, Queryable } from "../db/client.js";
import {
  insertNextFeeScheduleVersion,
  latestRatedUsageSince,
  listFeeScheduleRows,
  lockMarketplaceForFeeSchedule,
  type FeeScheduleRow,
} from "../db/queries/fee-schedules.js";
import { lockMarketplaceFundingExclusive } from "../db/queries/funding.js";
import { getMarketplace, PartyId } from "./marketplaces.js";
import { inTransaction } from "./transaction.js";
import { parseInput } from "./validation.js";

const Units = z.record(
  z.string().regex(/^[A-Z0-9][A-Z0-9._-]{0,31}$/, "must be an asset code"),
  z.string().refine((v) => parseUnits(v) !== undefined, "must be an integer amount in the asset's smallest unit, at most 2^256 - 1"),
);
const Bps = z.number().int().min(0).max(10_000);

/** min ≤ max for every asset given both. */
const minNotAboveMax = (r: { min?: Record<string, string>; max?: Record<string, string> }) =>
  Object.entries(r.min ?? {}).every(([code, min]) => r.max?.[code] === undefined || BigInt(min) <= BigInt(r.max[code]!));

const Override = z
  .strictObject({
    resource: z
      .string()
      .regex(/^[a-z0-9][a-z0-9:._-]{0,99}\*?$/, "must be a resource, or a prefix ending in *")
      .optional(),
    operatorId: PartyId.optional(),
    bps: Bps.optional(),
    fixed: Units.optional(),
    min: Units.optional(),
    max: Units.optional(),
  })
  .refine((o) => o.resource !== undefined || o.operatorId !== undefined, { message: "an override names a resource, an operator, or both" })
  .refine(minNotAboveMax, { message: "min must not be above max", path: ["min"] });

const Rule = z
  .strictObject({
    party: z.string().regex(/^[a-z][a-z0-9_]{0,31}$/, "must be a-z, 0-9 or '_'"),
    bps: Bps,
    fixed: Units.optional(),
    min: Units.optional(),
    max: Units.optional(),
    overrides: z.array(Override).max(100).optional(),
  })
  .refine(minNotAboveMax, { message: "min must not be above max", path: ["min"] });

export const FeeScheduleInput = z.strictObject({
  marketplaceId: PartyId,
  effectiveFrom: z.date(),
  rules: z
    .array(Rule)
    .max(10)
    .refine((rules) => new Set(rules.map((r) => r.party)).size === rules.length, "each party appears once"),
});

export interface FeeSchedule {
  marketplaceId: string;
  version: number;
  effectiveFrom: Date;
  rules: ConfiguredRule[];
  createdAt: Date;
}

const toSchedule = (r: FeeScheduleRow): FeeSchedule => ({
  marketplaceId: r.marketplace_id,
  version: r.version,
  effectiveFrom: new Date(r.effective_from),
  rules: r.rules,
  createdAt: new Date(r.created_at),
});

/**
 * Publishes the next version of a marketplace's fee schedule. Versions are immutable; a version
 * applies to usage whose period ends at or after its effective_from, until a later version starts.
 */
export async function publishFeeSchedule(db: Database | Queryable, raw: z.input<typeof FeeScheduleInput>): Promise<FeeSchedule> {
  const input = parseInput(FeeScheduleInput, raw);
  return inTransaction(db, async (tx) => {
    if (!(await getMarketplace(tx, input.marketplaceId))) throw new LedgerError("marketplace_not_found", `marketplace ${input.marketplaceId} does not exist`);
    // Serialise publishers of one marketplace so that version numbers are consecutive.
    await lockMarketplaceForFeeSchedule(tx, input.marketplaceId);
    // And the marketplace's funding lock, exclusively: usage being written (under it, shared) is
    // committed first and counted below; usage rated before and written after sees this version
    // and is rated again (src/services/ingest-usage/ledger-batch.ts).
    await lockMarketplaceFundingExclusive(tx, input.marketplaceId);
    // Usage already rated stays rated as it was: a version may not take effect before usage that
    // has already been posted (a first schedule may be back-dated while there is no usage yet).
    const latest = await latestRatedUsageSince(tx, input.marketplaceId, input.effectiveFrom);
    if (latest) {
      throw new LedgerError("fee_schedule_exists", `usage up to ${new Date(latest).toISOString()} was already rated; a new version must take effect after it`, [
        { path: "effectiveFrom", message: "is before usage already rated" },
      ]);
    }
    const row = await insertNextFeeScheduleVersion(tx, input.marketplaceId, input.effectiveFrom, input.rules);
    if (!row) throw new LedgerError("fee_schedule_exists", `a version taking effect at ${input.effectiveFrom.toISOString()} already exists`);
    return toSchedule(row);
  });
}

export async function listFeeSchedules(db: Queryable, marketplaceId: string): Promise<FeeSchedule[]> {
  return (await listFeeScheduleRows(db, marketplaceId)).map(toSchedule);
}
