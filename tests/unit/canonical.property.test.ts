import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/domain/canonical.js";
import { pgArray } from "../../src/db/sql-arrays.js";

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
    fc.string(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), fc.constant(undefined),
    fc.bigInt(), fc.date({ noInvalidDate: true }),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.string(), tie("value"), { maxKeys: 4 }),
  ),
})).value;

describe("canonical JSON and array literals", () => {
  it("canonicalJson equals its plain definition", () => {
    fc.assert(fc.property(values, (v) => { expect(canonicalJson(v)).toBe(reference(v)); }), { numRuns: 2000 });
  });

  it("pgArray quotes every element and escapes only quotes and backslashes", () => {
    expect(pgArray(["a", 'b"c', "d\\e", null, 5n, 7, true])).toBe('{"a","b\\"c","d\\\\e",NULL,"5","7","true"}');
  });
});
