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

/**
 * `sha256Hex(canonicalJson(value))`, computed piece by piece so that a large body (a 10,000-record
 * batch) does not hold the event loop: every `every` elements of a long array, `pause()` is awaited.
 * The digest is the same as the one-piece computation's (tested).
 */
export async function canonicalSha256(value: unknown, pause: () => Promise<void>, every = 250): Promise<string> {
  const hash = createHash("sha256");
  let n = 0;
  const big = (v: unknown): boolean =>
    (Array.isArray(v) && v.length > every) || (v !== null && typeof v === "object" && !(v instanceof Date) && !Array.isArray(v) && Object.values(v).some(big));
  const walk = async (v: unknown): Promise<void> => {
    if (!big(v)) {
      hash.update(canonicalJson(v));
      return;
    }
    if (Array.isArray(v)) {
      hash.update("[");
      for (let i = 0; i < v.length; i++) {
        if (i > 0) hash.update(",");
        await walk(v[i]);
        if (++n % every === 0) await pause();
      }
      hash.update("]");
      return;
    }
    const obj = v as Record<string, unknown>;
    const keys = Object.keys(obj).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    hash.update("{");
    let first = true;
    for (const k of keys) {
      if (obj[k] === undefined) continue;
      hash.update((first ? "" : ",") + JSON.stringify(k) + ":");
      first = false;
      await walk(obj[k]);
    }
    hash.update("}");
  };
  await walk(value);
  return hash.digest("hex");
}
