import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Queryable } from "../../src/db/client.js";
import { knownDepartures, type DistributionRule } from "../../src/db/schema/distribution-departures.js";
import { tablePlacement, type TablePlacement } from "../../src/db/schema/distribution.js";
import { insertUsageRecords } from "../../src/db/usage-writer.js";
import type { UsageRecord } from "../../src/domain/usage.js";
import { freshDatabase, type TestDatabase } from "../support/db.js";

/**
 * The placement of every table for a sharded deployment (src/db/schema/distribution.ts,
 * docs/scaling.md "Beyond one primary") against the migrated schema: every table is placed, and
 * the tables that break a rule of their placement are exactly the known departures.
 */

interface Catalog {
  tables: Set<string>;
  /** table → column → nullable */
  columns: Map<string, Map<string, boolean>>;
  /** Unique indexes (primary keys and unique constraints included): table, name, plain columns. */
  uniques: { table: string; name: string; columns: string[] }[];
  /** Foreign keys: table → referenced table, column pairs. */
  foreignKeys: { table: string; name: string; target: string; pairs: [string, string][] }[];
}

async function readCatalog(db: Queryable): Promise<Catalog> {
  const tables = await db.query<{ name: string }>(
    `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind in ('r', 'p')`,
  );
  const columns = await db.query<{ table: string; column: string; nullable: boolean }>(
    `select c.relname as table, a.attname as column, not a.attnotnull as nullable
       from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind in ('r', 'p') and a.attnum > 0 and not a.attisdropped`,
  );
  // indkey holds 0 for an expression: such a key includes no plain column there.
  const uniques = await db.query<{ table: string; name: string; columns: string | null }>(
    `select t.relname as table, ic.relname as name,
            (select string_agg(a.attname, ',' order by k.n)
               from unnest(i.indkey::int2[]) with ordinality as k(attnum, n)
               join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum) as columns
       from pg_index i join pg_class t on t.oid = i.indrelid join pg_class ic on ic.oid = i.indexrelid
       join pg_namespace n on n.oid = t.relnamespace
      where n.nspname = 'public' and i.indisunique`,
  );
  const foreignKeys = await db.query<{ table: string; name: string; target: string; pairs: string }>(
    `select s.relname as table, c.conname as name, d.relname as target,
            (select string_agg(sa.attname || '=' || da.attname, ',' order by k.n)
               from unnest(c.conkey, c.confkey) with ordinality as k(s, d, n)
               join pg_attribute sa on sa.attrelid = c.conrelid and sa.attnum = k.s
               join pg_attribute da on da.attrelid = c.confrelid and da.attnum = k.d) as pairs
       from pg_constraint c join pg_class s on s.oid = c.conrelid join pg_class d on d.oid = c.confrelid
       join pg_namespace n on n.oid = s.relnamespace
      where n.nspname = 'public' and c.contype = 'f'`,
  );
  const byTable = new Map<string, Map<string, boolean>>();
  for (const c of columns) byTable.set(c.table, (byTable.get(c.table) ?? new Map()).set(c.column, c.nullable));
  return {
    tables: new Set(tables.map((t) => t.name)),
    columns: byTable,
    uniques: uniques.map((u) => ({ table: u.table, name: u.name, columns: u.columns ? u.columns.split(",") : [] })),
    foreignKeys: foreignKeys.map((f) => ({
      table: f.table,
      name: f.name,
      target: f.target,
      pairs: f.pairs.split(",").map((p) => p.split("=") as [string, string]),
    })),
  };
}

/** Foreign keys Citus supports between placements (distributed → distributed: colocated, checked apart). */
const ALLOWED_REFERENCES: Record<TablePlacement["class"], TablePlacement["class"][]> = {
  distributed: ["distributed", "reference"],
  reference: ["reference"],
  global: ["global", "reference"],
};

/** table → the rules of its placement it breaks, each with the key or constraint at fault. */
function departuresOf(catalog: Catalog): Map<string, Map<DistributionRule, string[]>> {
  const found = new Map<string, Map<DistributionRule, string[]>>();
  const add = (table: string, rule: DistributionRule, what: string) => {
    const rules = found.get(table) ?? new Map<DistributionRule, string[]>();
    rules.set(rule, [...(rules.get(rule) ?? []), what].sort());
    found.set(table, rules);
  };
  for (const [table, placement] of Object.entries(tablePlacement)) {
    if (placement.class !== "distributed" || !catalog.tables.has(table)) continue;
    const column = placement.column!;
    const nullable = catalog.columns.get(table)?.get(column);
    if (nullable === undefined) add(table, "column-missing", column);
    else if (nullable) add(table, "column-nullable", column);
    for (const u of catalog.uniques.filter((u) => u.table === table && !u.columns.includes(column))) add(table, "key-without-column", u.name);
  }
  for (const fk of catalog.foreignKeys) {
    const from = tablePlacement[fk.table];
    const to = tablePlacement[fk.target];
    if (!from || !to) continue;
    if (!ALLOWED_REFERENCES[from.class].includes(to.class)) add(fk.table, "foreign-key-across-placement", fk.name);
    else if (from.class === "distributed" && to.class === "distributed") {
      if (!fk.pairs.some(([s, d]) => s === from.column && d === to.column)) add(fk.table, "foreign-key-without-column", fk.name);
    }
  }
  return found;
}

const ruleNames = (rules: Map<DistributionRule, string[]> | undefined) => [...(rules?.keys() ?? [])].sort();

describe("placement of every table on a sharded deployment (src/db/schema/distribution.ts)", () => {
  let db: TestDatabase;
  let catalog: Catalog;
  beforeAll(async () => {
    db = await freshDatabase();
    catalog = await readCatalog(db);
  });
  afterAll(async () => {
    await db.destroy();
  });

  it("every table of the migrated schema is placed, and every placed table exists", () => {
    expect(catalog.tables.size).toBeGreaterThan(50);
    expect([...catalog.tables].filter((t) => !(t in tablePlacement)).sort()).toEqual([]);
    expect(Object.keys(tablePlacement).filter((t) => !catalog.tables.has(t))).toEqual([]);
  });

  it("a distributed table names its distribution column; no other placement does", () => {
    for (const [table, placement] of Object.entries(tablePlacement)) {
      expect([table, placement.column !== undefined]).toEqual([table, placement.class === "distributed"]);
    }
  });

  it("the tables that break a rule of their placement are exactly the known departures, rule by rule", () => {
    const found = departuresOf(catalog);
    const actual = Object.fromEntries([...found.keys()].sort().map((t) => [t, ruleNames(found.get(t))]));
    const listed = Object.fromEntries(
      Object.keys(knownDepartures)
        .sort()
        .map((t) => [t, [...knownDepartures[t]!.rules].sort()]),
    );
    expect(actual).toEqual(listed);
    for (const [table, d] of Object.entries(knownDepartures)) {
      expect([table, d.reason.length > 0 && d.migration.length > 0]).toEqual([table, true]);
    }
  });

  it("the checks catch what they are for: a new table unplaced, a unique key without the column, a foreign key across shards", async () => {
    await db
      .transaction(async (tx) => {
        await tx.query("create table scratch_unplaced (id int primary key)");
        await tx.query("alter table usage_limits add constraint scratch_asset_uq unique (asset_id, updated_by)");
        await tx.query("alter table customers add column scratch_hold uuid references holds(id)");
        const scratch = await readCatalog(tx);
        expect(scratch.tables.has("scratch_unplaced") && !("scratch_unplaced" in tablePlacement)).toBe(true);
        const found = departuresOf(scratch);
        expect(found.get("usage_limits")?.get("key-without-column")).toEqual(["scratch_asset_uq"]);
        expect(ruleNames(found.get("customers"))).toEqual(["foreign-key-without-column"]);
        throw new Error("undo the scratch schema");
      })
      .catch((e: unknown) => {
        if (!(e instanceof Error) || e.message !== "undo the scratch schema") throw e;
      });
    expect((await readCatalog(db)).tables.has("scratch_unplaced")).toBe(false);
  });
});

describe("usage ingest writes one marketplace's rows", () => {
  it("the usage writer's statement writes only tables distributed by marketplace, reads only reference tables, and carries each record's marketplace", async () => {
    const statements: { text: string; params: unknown[] }[] = [];
    const recorder = {
      query: async (text: string, params: unknown[] = []) => {
        statements.push({ text, params });
        return [];
      },
    } as unknown as Queryable;
    await insertUsageRecords(recorder, [sampleRecord()]);
    expect(statements).toHaveLength(1);
    const text = statements[0]!.text.toLowerCase();
    const written = [...text.matchAll(/insert into\s+([a-z_]+)/g)].map((m) => m[1]!);
    const read = [...text.matchAll(/\b(?:from|join)\s+([a-z_]+)\s+[a-z]+\s+on\b/g)].map((m) => m[1]!);
    expect(written.sort()).toEqual(["rate_lock_queue", "usage_records"]);
    for (const t of written) expect([t, tablePlacement[t]]).toEqual([t, { class: "distributed", column: "marketplace_id" }]);
    expect(read).toEqual(["marketplaces"]);
    for (const t of read) expect([t, tablePlacement[t]?.class]).toEqual([t, "reference"]);
    // The queued rows take the marketplace of the record they were inserted with.
    expect(text).toMatch(/select ins\.id, ins\.marketplace_id/);
    expect(statements[0]!.params[1]).toEqual(expect.stringContaining("m-dist"));
  });
});

function sampleRecord(): UsageRecord {
  const at = new Date("2026-01-01T00:00:00Z");
  return {
    id: "00000000-0000-4000-8000-000000000001",
    marketplaceId: "m-dist",
    externalId: "e1",
    requestHash: "h",
    operatorId: "o1",
    customerId: "c1",
    resource: "gpu",
    unit: "second",
    quantity: "1",
    unitPrice: null,
    assetId: "00000000-0000-4000-8000-000000000002",
    gross: 10n,
    net: 9n,
    fees: [],
    feeScheduleVersion: null,
    periodStart: at,
    periodEnd: at,
    effectiveAt: at,
    holdId: null,
    transferId: "00000000-0000-4000-8000-000000000003",
    metadata: {},
    createdAt: at,
    status: "posted",
  };
}
