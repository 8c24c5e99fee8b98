import { createHash } from "node:crypto";

/**
 * Deterministic JSON: object keys sorted, bigints as decimal strings, dates as ISO strings,
 * undefined fields dropped. Two requests that mean the same thing serialise the same way.
 */
export function canonicalJson(value: unknown): string {
  // On the hot path of every write (request hashes) and of sealing: written to allocate little.
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "number":
    case "boolean":
      return JSON.stringify(value);
    case "bigint":
      return `"${value.toString()}"`;
    case "undefined":
      return "null";
  }
  if (value === null) return "null";
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) out += (i > 0 ? "," : "") + canonicalJson(value[i]);
    return out + "]";
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  let out = "{";
  let first = true;
  for (const k of keys) {
    const v = obj[k];
    if (v === undefined) continue;
    out += (first ? "" : ",") + JSON.stringify(k) + ":" + canonicalJson(v);
    first = false;
  }
  return out + "}";
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
