/**
 * PostgreSQL array literals, so that a whole batch travels as one parameter per column
 * (`unnest($1::uuid[], $2::numeric[], ...)`) identically on postgres.js and PGlite.
 * Every element is quoted; backslashes and double quotes are escaped; null stays NULL.
 */
export function pgArray(values: ReadonlyArray<string | bigint | number | boolean | null>): string {
  let out = "{";
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ",";
    const v = values[i];
    if (v === null || v === undefined) out += "NULL";
    else out += '"' + String(v).replace(/[\\"]/g, (c) => "\\" + c) + '"';
  }
  return out + "}";
}
