import { SECONDS_PER_UNIT } from "../../domain/earnings.js";
import type { Queryable } from "../client.js";
import { pgArray } from "../sql-arrays.js";

export interface CapacityRow {
  operator_id: string;
  resource: string;
  version: number;
  units: number;
  effective_from: Date | string;
  until: Date | string | null;
  declared_by: string;
  created_at: Date | string;
}

/** Locks the operator's row, so that declarations of its capacity take turns (consecutive version numbers). */
export async function lockOperatorForCapacity(tx: Queryable, operatorId: string): Promise<boolean> {
  return (await tx.query("select 1 from operators where id = $1 for update", [operatorId])).length > 0;
}

/** Inserts the next version of the operator's capacity of a resource; undefined when one takes effect at that instant already. */
export async function insertCapacityVersion(
  tx: Queryable,
  v: { operatorId: string; resource: string; units: number; effectiveFrom: Date; until: Date | null; by: string; at: Date },
): Promise<CapacityRow | undefined> {
  const rows = await tx.query<CapacityRow>(
    `insert into operator_capacity (operator_id, resource, version, units, effective_from, until, declared_by, created_at)
       values ($1, $2, coalesce((select max(version) from operator_capacity where operator_id = $1 and resource = $2), 0) + 1, $3, $4, $5, $6, $7)
       on conflict do nothing returning *`,
    [v.operatorId, v.resource, v.units, v.effectiveFrom.toISOString(), v.until?.toISOString() ?? null, v.by, v.at.toISOString()],
  );
  return rows[0];
}

/** Every capacity version of the operator (of one resource, when given), by resource then version. */
export async function listCapacityRows(db: Queryable, operatorId: string, resource?: string): Promise<CapacityRow[]> {
  return db.query<CapacityRow>("select * from operator_capacity where operator_id = $1 and ($2::text is null or resource = $2) order by resource, version", [
    operatorId,
    resource ?? null,
  ]);
}

/**
 * For each window (an operator, a resource, [start, end)), the unit-milliseconds of that
 * operator's stored usage of the resource in it, from every marketplace, not reversed, in time
 * units: each record's share ⌊quantity × ms per unit × overlap / length⌋ (div: exact integer
 * division), summed. One statement for a whole batch.
 */
export async function usedUnitMs(db: Queryable, windows: { key: number; operatorId: string; resource: string; start: Date; end: Date }[]) {
  if (windows.length === 0) return new Map<number, bigint>();
  const units = Object.entries(SECONDS_PER_UNIT);
  const rows = await db.query<{ key: number; used: string }>(
    `select w.key, coalesce(sum(div(u.quantity * tu.ms * (extract(epoch from least(u.period_end, w.e) - greatest(u.period_start, w.s)) * 1000),
                                    extract(epoch from u.period_end - u.period_start) * 1000)), 0)::text as used
       from unnest($1::int[], $2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[]) as w(key, operator_id, resource, s, e)
       join usage_records u on u.operator_id = w.operator_id and u.resource = w.resource and u.period_end > w.s and u.period_start < w.e
                           and u.period_end > u.period_start
       join unnest($6::text[], $7::numeric[]) as tu(unit, ms) on tu.unit = u.unit
      where not exists (select 1 from transfers r where r.reverses_id = u.transfer_id)
      group by w.key`,
    [
      pgArray(windows.map((w) => w.key)),
      pgArray(windows.map((w) => w.operatorId)),
      pgArray(windows.map((w) => w.resource)),
      pgArray(windows.map((w) => w.start.toISOString())),
      pgArray(windows.map((w) => w.end.toISOString())),
      pgArray(units.map(([u]) => u)),
      pgArray(units.map(([, s]) => s * 1000n)),
    ],
  );
  return new Map(rows.map((r) => [Number(r.key), BigInt(r.used)]));
}

/**
 * Transaction-scoped advisory locks on (operator, resource) pairs (`operator|resource`), in one
 * order, so batches judged on the same pair write one after the other.
 */
export async function lockCapacity(tx: Queryable, pairs: string[]): Promise<void> {
  if (pairs.length === 0) return;
  await tx.query(
    `select pg_advisory_xact_lock(hashtextextended('usage-capacity:' || s.k, 0))
       from (select k from unnest($1::text[]) as k order by k) s`,
    [pgArray([...pairs].sort())],
  );
}

/** The capacity policies of these marketplaces: `marketplace|resource` → policy (resource `*`: the marketplace's default). */
export async function capacityPoliciesOf(db: Queryable, marketplaceIds: string[]): Promise<Map<string, "refuse" | "flag">> {
  const rows = await db.query<{ marketplace_id: string; resource: string; policy: "refuse" | "flag" }>(
    "select marketplace_id, resource, policy from capacity_policies where marketplace_id = any($1::text[])",
    [pgArray(marketplaceIds)],
  );
  return new Map(rows.map((r) => [`${r.marketplace_id}|${r.resource}`, r.policy]));
}

export interface PolicyRow {
  resource: string;
  policy: "refuse" | "flag";
  updated_by: string;
  updated_at: Date | string;
}

export async function listCapacityPolicyRows(db: Queryable, marketplaceId: string): Promise<PolicyRow[]> {
  return db.query<PolicyRow>("select resource, policy, updated_by, updated_at from capacity_policies where marketplace_id = $1 order by resource", [
    marketplaceId,
  ]);
}

/** Replaces a marketplace's capacity policies with these (resource `*`: its default). */
export async function replaceCapacityPolicies(tx: Queryable, marketplaceId: string, policies: { resource: string; policy: string }[], by: string, at: Date) {
  await tx.query("delete from capacity_policies where marketplace_id = $1", [marketplaceId]);
  if (policies.length === 0) return;
  await tx.query(
    `insert into capacity_policies (marketplace_id, resource, policy, updated_by, updated_at)
     select $1, r, p, $4, $5 from unnest($2::text[], $3::text[]) as x(r, p)`,
    [marketplaceId, pgArray(policies.map((p) => p.resource)), pgArray(policies.map((p) => p.policy)), by, at.toISOString()],
  );
}

export interface FlagInput {
  usageId: string;
  marketplaceId: string;
  operatorId: string;
  resource: string;
  capacity: bigint;
  used: bigint;
  claimed: bigint;
}

/** The flags of records accepted beyond capacity, written with the records (one statement). */
export async function insertCapacityFlags(tx: Queryable, flags: FlagInput[], at: Date): Promise<void> {
  if (flags.length === 0) return;
  await tx.query(
    `insert into usage_capacity_flags (usage_id, marketplace_id, operator_id, resource, capacity_unit_ms, used_unit_ms, claimed_unit_ms, created_at)
     select u, m, o, r, c, d, q, $8 from unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::numeric[], $6::numeric[], $7::numeric[]) as x(u, m, o, r, c, d, q)`,
    [
      pgArray(flags.map((f) => f.usageId)),
      pgArray(flags.map((f) => f.marketplaceId)),
      pgArray(flags.map((f) => f.operatorId)),
      pgArray(flags.map((f) => f.resource)),
      pgArray(flags.map((f) => f.capacity)),
      pgArray(flags.map((f) => f.used)),
      pgArray(flags.map((f) => f.claimed)),
      at.toISOString(),
    ],
  );
}

export interface FlagRow {
  usage_id: string;
  external_id: string;
  operator_id: string;
  resource: string;
  capacity_unit_ms: string;
  used_unit_ms: string;
  claimed_unit_ms: string;
  created_at: Date | string;
}

/** A marketplace's flagged records, newest first, before the cursor's (created_at, usage_id). */
export async function listCapacityFlagRows(db: Queryable, marketplaceId: string, limit: number, after?: { at: string; id: string }): Promise<FlagRow[]> {
  return db.query<FlagRow>(
    `select f.usage_id, u.external_id, f.operator_id, f.resource, f.capacity_unit_ms::text, f.used_unit_ms::text, f.claimed_unit_ms::text, f.created_at
       from usage_capacity_flags f join usage_records u on u.id = f.usage_id
      where f.marketplace_id = $1 and ($2::timestamptz is null or (f.created_at, f.usage_id) < ($2::timestamptz, $3::uuid))
      order by f.created_at desc, f.usage_id desc limit $4`,
    [marketplaceId, after?.at ?? null, after?.id ?? null, limit],
  );
}
