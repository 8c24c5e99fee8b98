import { batchTuning, giveWay } from "../give-way.js";

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

type Element = string | bigint | number | boolean | null;

/**
 * The array literals of a bulk insert's columns (`pgArray` of each column's values), one per
 * function, in order. For a large batch it gives way to other requests between columns, so that
 * building ten columns of 60,000 entries does not hold the event loop in one go. Pass
 * `giveWay: false` while holding locks other writers queue on (a hot account's balance row).
 */
export async function pgColumns<R>(rows: readonly R[], columns: ReadonlyArray<(row: R) => Element>, options: { giveWay?: boolean } = {}): Promise<string[]> {
  const out: string[] = [];
  for (const f of columns) {
    if (options.giveWay !== false && out.length > 0 && rows.length > batchTuning.yieldEvery) await giveWay();
    const values = new Array<Element>(rows.length);
    for (let i = 0; i < rows.length; i++) values[i] = f(rows[i]!);
    out.push(pgArray(values));
  }
  return out;
}
