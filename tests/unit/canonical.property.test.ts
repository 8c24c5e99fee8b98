import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, canonicalSha256, sha256Hex } from "../../src/domain/canonical.js";
import { pgArray, pgColumns } from "../../src/db/sql-arrays.js";

/** The plain definition the fast one must equal (sealed hashes depend on every byte of it). */
function reference(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "bigint") return JSON.stringify(value.toString());
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return "[" + value.map(reference).join(",") + "]";
  if (typeof value === "object") {
    const fields = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => JSON.stringify(k) + ":" + reference(v));
    return "{" + fields.join(",") + "}";
  }
  return JSON.stringify(value);
}

const values = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.string(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.bigInt(),
    fc.date({ noInvalidDate: true }),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.string(), tie("value"), { maxKeys: 4 }),
  ),
})).value;

describe("canonical JSON and array literals", () => {
  it("canonicalJson equals its plain definition", () => {
    fc.assert(
      fc.property(values, (v) => {
        expect(canonicalJson(v)).toBe(reference(v));
      }),
      { numRuns: 2000 },
    );
  });

  it("canonicalSha256, computed piece by piece with pauses, is the digest of canonicalJson", async () => {
    let pauses = 0;
    const pause = async () => {
      pauses++;
    };
    await fc.assert(
      fc.asyncProperty(values, async (v) => {
        // every = 1: every array of two or more elements is walked piece by piece.
        expect(await canonicalSha256(v, pause, 1)).toBe(sha256Hex(canonicalJson(v)));
      }),
      { numRuns: 1000 },
    );
    const batch = {
      method: "POST",
      path: "/v1/usage/batch",
      body: { records: Array.from({ length: 1000 }, (_, i) => ({ external_id: `r-${i}`, n: [i, { x: undefined, y: i }] })), atomic: false },
    };
    pauses = 0;
    expect(await canonicalSha256(batch, pause, 250)).toBe(sha256Hex(canonicalJson(batch)));
    expect(pauses).toBe(4);
  });

  it("pgColumns builds each column's literal as pgArray does", async () => {
    const rows = Array.from({ length: 600 }, (_, i) => ({ id: `r${i}`, n: BigInt(i), note: i % 3 === 0 ? null : 'q"' }));
    const cols = await pgColumns(rows, [(r) => r.id, (r) => r.n, (r) => r.note]);
    expect(cols).toEqual([pgArray(rows.map((r) => r.id)), pgArray(rows.map((r) => r.n)), pgArray(rows.map((r) => r.note))]);
  });

  it("pgArray quotes every element and escapes only quotes and backslashes", () => {
    expect(pgArray(["a", 'b"c', "d\\e", null, 5n, 7, true])).toBe('{"a","b\\"c","d\\\\e",NULL,"5","7","true"}');
  });
});
