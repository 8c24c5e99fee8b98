import type { LockedPeriod } from "../../domain/period-rules.js";
import type { UsageRecord } from "../../domain/usage.js";
import type { ConfiguredRule } from "../../domain/rating.js";
import type { Queryable } from "../client.js";
import type { CapacityRow } from "./capacity.js";
import { operatorsOwingSql } from "./receivables.js";
import { pgArray } from "../sql-arrays.js";

const COLUMNS = `u.id, u.marketplace_id, u.external_id, u.request_hash, u.operator_id, u.customer_id, u.resource, u.unit,
  u.quantity::text as quantity, u.unit_price::text as unit_price, u.asset_id, u.gross::text as gross, u.net::text as net,
  u.fees, u.fee_schedule_version, u.period_start, u.period_end, u.effective_at, u.hold_id, u.transfer_id, u.metadata, u.created_at,
  exists (select 1 from transfers r where r.reverses_id = u.transfer_id) as reversed`;

type Row = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function toUsage(r: Row): UsageRecord {
  return {
    id: r.id,
    marketplaceId: r.marketplace_id,
    externalId: r.external_id,
    requestHash: r.request_hash,
    operatorId: r.operator_id,
    customerId: r.customer_id,
    resource: r.resource,
    unit: r.unit,
    quantity: r.quantity,
    unitPrice: r.unit_price,
    assetId: r.asset_id,
    gross: BigInt(r.gross),
    net: BigInt(r.net),
    fees: (r.fees as { party: string; account_id: string; amount: string }[]).map((f) => ({
      party: f.party,
      accountId: f.account_id,
      amount: BigInt(f.amount),
    })),
    feeScheduleVersion: r.fee_schedule_version,
    periodStart: new Date(r.period_start),
    periodEnd: new Date(r.period_end),
    effectiveAt: new Date(r.effective_at),
    holdId: r.hold_id,
    transferId: r.transfer_id,
    metadata: r.metadata,
    createdAt: new Date(r.created_at),
    status: r.reversed ? "reversed" : "posted",
  };
}

/** Existing records by (marketplace, external id), keyed `${marketplace}|${externalId}`. */
export async function findUsageByExternalIds(db: Queryable, keys: { marketplaceId: string; externalId: string }[]): Promise<Map<string, UsageRecord>> {
  const out = new Map<string, UsageRecord>();
  if (keys.length === 0) return out;
  const rows = await db.query<Row>(
    `select ${COLUMNS} from unnest($1::text[], $2::text[]) as k(m, e)
       join usage_records u on u.marketplace_id = k.m and u.external_id = k.e`,
    [pgArray(keys.map((k) => k.marketplaceId)), pgArray(keys.map((k) => k.externalId))],
  );
  for (const r of rows) out.set(`${r.marketplace_id}|${r.external_id}`, toUsage(r));
  return out;
}

export async function getUsage(db: Queryable, id: string): Promise<UsageRecord | undefined> {
  const rows = await db.query<Row>(`select ${COLUMNS} from usage_records u where u.id = $1`, [id]);
  return rows[0] && toUsage(rows[0]);
}

export interface UsageFilter {
  marketplaceId?: string;
  operatorId?: string;
  customerId?: string;
  resource?: string;
  from?: Date;
  to?: Date;
  /** id of the last record of the previous page */
  after?: string;
  limit: number;
}

/** Records in id order (time-ordered uuids), filtered. */
export async function listUsage(db: Queryable, f: UsageFilter): Promise<UsageRecord[]> {
  const rows = await db.query<Row>(
    `select ${COLUMNS} from usage_records u
      where ($1::text is null or u.marketplace_id = $1) and ($2::text is null or u.operator_id = $2)
        and ($3::text is null or u.customer_id = $3) and ($4::text is null or u.resource = $4)
        and ($5::timestamptz is null or u.effective_at >= $5) and ($6::timestamptz is null or u.effective_at < $6)
        and ($7::uuid is null or u.id > $7)
      order by u.id limit $8`,
    [
      f.marketplaceId ?? null,
      f.operatorId ?? null,
      f.customerId ?? null,
      f.resource ?? null,
      f.from?.toISOString() ?? null,
      f.to?.toISOString() ?? null,
      f.after ?? null,
      f.limit,
    ],
  );
  return rows.map(toUsage);
}

export type UsageLimitRow = {
  marketplace_id: string;
  asset_id: string;
  max_gross_per_record: string | null;
  max_quantity_per_second: Record<string, string>;
  updated_by: string;
  updated_at: Date | string;
};

const USAGE_LIMIT_COLUMNS = `marketplace_id, asset_id, max_gross_per_record::text as max_gross_per_record, max_quantity_per_second, updated_by, updated_at`;

/** The usage limits an admin set for these marketplaces (src/domain/usage-limits.ts). */
export async function loadUsageLimitRows(db: Queryable, marketplaceIds: string[]): Promise<UsageLimitRow[]> {
  if (marketplaceIds.length === 0) return [];
  return db.query<UsageLimitRow>(`select ${USAGE_LIMIT_COLUMNS} from usage_limits where marketplace_id = any($1::text[])`, [pgArray(marketplaceIds)]);
}

/** One marketplace's limits for an asset, if an admin set any; `forUpdate` locks the row. */
export async function getUsageLimitRow(db: Queryable, marketplaceId: string, assetId: string, forUpdate = false): Promise<UsageLimitRow | undefined> {
  const [row] = await db.query<UsageLimitRow>(
    `select ${USAGE_LIMIT_COLUMNS} from usage_limits where marketplace_id = $1 and asset_id = $2${forUpdate ? " for update" : ""}`,
    [marketplaceId, assetId],
  );
  return row;
}

/** What rating needs to know about the marketplaces of a batch. */
export interface MarketplaceFacts {
  customers: Map<string, "prepaid" | "postpaid">; // `${m}|${c}`
  /** Retired customers (`${m}|${c}`), when: they take no new usage. */
  retiredCustomers: Map<string, Date>;
  operators: Set<string>; // `${m}|${o}`
  schedules: Map<string, { version: number; effectiveFrom: Date; rules: ConfiguredRule[] }[]>; // by marketplace, newest first
  /** Marketplaces' pricing currencies (asset code), by marketplace: their usage is rated in it and nothing else. */
  pricing: Map<string, string>;
  /** Marketplaces' accounting periods that are not open (closing, closed), by marketplace. */
  periods: Map<string, LockedPeriod[]>;
  assets: Map<string, { id: string; scale: number; retiredAt: Date | null }>; // by code
  holds: Map<string, { marketplaceId: string; customerId: string; assetId: string; escrowAccountId: string; status: string; expired: boolean }>;
  /** Usage limits set by an admin, by `${marketplace}|${asset id}`; absent: the defaults. */
  limits: Map<string, UsageLimitRow>;
}

/** A period that is not open, as the facts query answers it. */
interface LockedJson {
  period: string;
  starts_at: string;
  ends_at: string;
  status: "closing" | "closed";
}

/** What a usage batch needs to know before it is rated, as `loadIngestFacts` answers it. */
export interface IngestFacts {
  /** Records already stored under the batch's (marketplace, external id), keyed `${marketplace}|${externalId}`. */
  existing: Map<string, UsageRecord>;
  facts: MarketplaceFacts;
  /** The capacity operators declared for the (operator, resource) pairs asked for (src/services/ingest-usage/capacity.ts). */
  capacity: CapacityRow[];
  /**
   * The batch's operators that owe the platform something (a receivable, docs/ledger.md
   * "Clawbacks"): their new earnings pay it back after the write. Usage never adds to a
   * receivable, so this read before the write is as good as one after it.
   */
  owing: Set<string>;
}

/**
 * Everything a usage batch is checked and rated against, read with one statement (one round trip,
 * one snapshot): the records already stored under its external ids, its customers, operators,
 * marketplaces' fee schedules, pricing currencies and periods that are not open, assets, holds,
 * usage limits, declared capacity and which of its operators owe the platform something. One
 * statement instead of nine matters for single records, whose batches are small and many
 * (docs/performance.md, "The floor with the service's own rows").
 */
export async function loadIngestFacts(
  db: Queryable,
  wanted: {
    usage: [string, string][];
    customers: [string, string][];
    operators: [string, string][];
    marketplaces: string[];
    assetCodes: string[];
    holdIds: string[];
    capacity: [string, string][];
  },
  /** The service clock's instant that hold expiry is judged at. */
  now: Date,
): Promise<IngestFacts> {
  const pairs = (list: [string, string][]) => [pgArray(list.map((x) => x[0])), pgArray(list.map((x) => x[1]))];
  const [row] = await db.query<FactsRow>(
    `select
       (select json_agg(x) from (select ${COLUMNS} from unnest($1::text[], $2::text[]) as k(m, e)
          join usage_records u on u.marketplace_id = k.m and u.external_id = k.e) x) as existing,
       (select json_agg(x) from (select c.marketplace_id as m, c.id as c, c.billing, c.retired_at from unnest($3::text[], $4::text[]) as w(m, c)
          join customers c on c.marketplace_id = w.m and c.id = w.c) x) as customers,
       (select json_agg(x) from (select r.marketplace_id as m, r.operator_id as o from unnest($5::text[], $6::text[]) as w(m, o)
          join marketplace_operators r on r.marketplace_id = w.m and r.operator_id = w.o) x) as operators,
       (select json_agg(x order by x.m, x.effective_from desc) from (
          select f.marketplace_id as m, f.version, f.effective_from, f.rules,
                 (select a.code from marketplaces k join assets a on a.id = k.pricing_asset_id where k.id = f.marketplace_id) as pricing,
                 (select json_agg(json_build_object('period', p.period, 'starts_at', p.starts_at, 'ends_at', p.ends_at, 'status', p.status))
                    from accounting_periods p where p.marketplace_id = f.marketplace_id and p.status <> 'open') as locked
            from fee_schedules f where f.marketplace_id = any($7::text[])) x) as schedules,
       (select json_agg(x) from (select id, code, scale, retired_at from assets where code = any($8::text[])) x) as assets,
       (select json_agg(x) from (select id, marketplace_id, customer_id, asset_id, escrow_account_id, status,
                                        coalesce(expires_at <= $10::timestamptz, false) as expired
                                   from holds where id = any($9::uuid[])) x) as holds,
       (select json_agg(x) from (select ${USAGE_LIMIT_COLUMNS} from usage_limits where marketplace_id = any($7::text[])) x) as limits,
       (select json_agg(x) from (select c.* from operator_capacity c join unnest($11::text[], $12::text[]) as p(operator_id, resource)
          on c.operator_id = p.operator_id and c.resource = p.resource) x) as capacity,
       (select json_agg(x.operator_id) from (${operatorsOwingSql(13)}) x) as owing`,
    [
      ...pairs(wanted.usage),
      ...pairs(wanted.customers),
      ...pairs(wanted.operators),
      pgArray(wanted.marketplaces),
      pgArray(wanted.assetCodes),
      pgArray(wanted.holdIds),
      now.toISOString(),
      ...pairs(wanted.capacity),
      pgArray([...new Set(wanted.operators.map((x) => x[1]))]),
    ],
  );
  return factsOf(row!);
}

/** The facts statement's row: each part as a JSON array, null when empty. */
interface FactsRow {
  existing: Row[] | null;
  customers: { m: string; c: string; billing: "prepaid" | "postpaid"; retired_at: string | null }[] | null;
  operators: { m: string; o: string }[] | null;
  schedules: { m: string; version: number; effective_from: string; rules: ConfiguredRule[]; pricing: string | null; locked: LockedJson[] | null }[] | null;
  assets: { id: string; code: string; scale: number; retired_at: string | null }[] | null;
  holds: { id: string; marketplace_id: string; customer_id: string; asset_id: string; escrow_account_id: string; status: string; expired: boolean }[] | null;
  limits: UsageLimitRow[] | null;
  capacity: CapacityRow[] | null;
  owing: string[] | null;
}

/** The facts statement's row as the batch's facts. */
function factsOf(r: FactsRow): IngestFacts {
  const existing = new Map<string, UsageRecord>();
  for (const u of r.existing ?? []) existing.set(`${u.marketplace_id}|${u.external_id}`, toUsage(u));
  const facts: MarketplaceFacts = {
    customers: new Map(),
    retiredCustomers: new Map(),
    operators: new Set((r.operators ?? []).map((o) => `${o.m}|${o.o}`)),
    schedules: new Map(),
    pricing: new Map(),
    periods: new Map(),
    assets: new Map((r.assets ?? []).map((a) => [a.code, { id: a.id, scale: a.scale, retiredAt: a.retired_at === null ? null : new Date(a.retired_at) }])),
    holds: new Map(),
    limits: new Map(),
  };
  for (const c of r.customers ?? []) {
    facts.customers.set(`${c.m}|${c.c}`, c.billing);
    if (c.retired_at !== null) facts.retiredCustomers.set(`${c.m}|${c.c}`, new Date(c.retired_at));
  }
  for (const l of r.limits ?? []) facts.limits.set(`${l.marketplace_id}|${l.asset_id}`, l);
  for (const h of r.holds ?? [])
    facts.holds.set(h.id, {
      marketplaceId: h.marketplace_id,
      customerId: h.customer_id,
      assetId: h.asset_id,
      escrowAccountId: h.escrow_account_id,
      status: h.status,
      expired: h.expired,
    });
  addSchedules(facts, r.schedules ?? []);
  return { existing, facts, capacity: r.capacity ?? [], owing: new Set(r.owing ?? []) };
}

/** Each marketplace's fee schedules (newest first), pricing currency and periods that are not open, from the schedules query. */
function addSchedules(
  facts: MarketplaceFacts,
  schedules: { m: string; version: number; effective_from: Date | string; rules: ConfiguredRule[]; pricing: string | null; locked: LockedJson[] | null }[],
): void {
  for (const s of schedules) {
    if (s.pricing !== null) facts.pricing.set(s.m, s.pricing);
    if (s.locked !== null && !facts.periods.has(s.m))
      facts.periods.set(
        s.m,
        s.locked.map((l) => ({ period: l.period, startsAt: new Date(l.starts_at), endsAt: new Date(l.ends_at), status: l.status })),
      );
    const list = facts.schedules.get(s.m) ?? [];
    list.push({ version: s.version, effectiveFrom: new Date(s.effective_from), rules: s.rules });
    facts.schedules.set(s.m, list);
  }
}
