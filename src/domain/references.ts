// How a receipt's reference is compared, and the on-chain transactions it names.

/**
 * The transaction hashes a reference key may name: every run of 64 hex digits in it (each 64-digit
 * window of a longer run), as 0x and 64 lowercase digits. The key keeps letters and digits only,
 * so "0xABC…", "abc…", "Base tx 0xabc…" and "ab-c…" all show the same 64 digits; the letters that
 * pass for digits are read as them (o as 0, i and l as 1: hashesReadAs), so "0xdeadbeefO…" too.
 */
export function txHashesIn(key: string): string[] {
  const out = new Set<string>();
  for (const run of hashesReadAs(key).match(/[0-9a-f]{64,}/g) ?? []) for (let i = 0; i + 64 <= run.length; i++) out.add(`0x${run.slice(i, i + 64)}`);
  return [...out];
}

/** A reference key with the letters that pass for digits read as them; the same as SQL's `translate(key, 'oil', '011')`. */
export function hashesReadAs(key: string): string {
  return key.replace(/o/g, "0").replace(/[il]/g, "1");
}

/** A reference as compared: letters and digits only, case folded ("WIRE 2026-0042 " and "wire20260042" are one). */
export function referenceKey(reference: string): string {
  return reference.toLowerCase().replace(/[^a-z0-9]/g, "");
}
