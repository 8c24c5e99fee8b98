/**
 * PostgreSQL array literals, so that a whole batch travels as one parameter per column
 * (`unnest($1::uuid[], $2::numeric[], ...)`) identically on postgres.js and PGlite.
 * Every element is quoted; backslashes and double quotes are escaped; null stays NULL.
 */
export function pgArray(values: ReadonlyArray<string | bigint | number | boolean | null>): string {
  const parts = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === null || v === undefined) parts[i] = "NULL";
    else {
      const s = typeof v === "string" ? v : String(v);
      // Most elements (uuids, numbers, codes) need no escaping: skip the regex for them.
      parts[i] = s.includes('"') || s.includes("\\") ? '"' + s.replace(/[\\"]/g, (c) => "\\" + c) + '"' : '"' + s + '"';
    }
  }
  return "{" + parts.join(",") + "}";
}
