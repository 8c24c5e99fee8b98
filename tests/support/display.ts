import { decimalToUnits, unitsToDecimal } from "../../src/domain/money.js";

/**
 * The display convention of the API's reads (docs/api.md, "Conventions"): every amount `<field>` in
 * an asset's smallest units has a twin `<field>_display`, the same integer in display units.
 */

/**
 * Fields whose value is an integer string but not an amount (ids, blocks, quantities); any other
 * field holding an integer string is taken for an amount and must have its twin.
 */
const NOT_AMOUNTS = new Set([
  "id",
  "entry_id",
  "block_number",
  "from_block",
  "to_block",
  "quantity",
  "paid_hours",
  "available_unit_hours",
  "utilisation",
  "external_id",
  "external_reference",
  "group",
]);

/**
 * Fields holding free-form JSON or values by name that are not amounts, not walked: metadata, a
 * usage limit's quantities per second by unit, a proposal's payload and result (exempt from the
 * convention, docs/api.md).
 */
const NOT_WALKED = new Set(["metadata", "max_quantity_per_second", "payload", "result"]);

/** Rates kept in display units before the convention: `<rate>` is the display form of `<rate>_units`. */
const RATES = ["effective_rate_per_hour", "effective_rate_per_unit", "net_per_available_unit_hour"];

export interface DisplayCheck {
  /** Where in the answer, e.g. "data.3.amount". */
  path: string;
  units: string;
  display: string | null;
  scale: number;
}

/**
 * Walks a JSON answer and returns every amount with its display twin, after checking that each
 * amount has one: the scale of an object's amounts is that of the asset its nearest `asset_id` or
 * `asset` (code) names, here or in an enclosing object (or `rootScale`, for an answer that names
 * no asset: an account's balance). Throws, naming the path, on an amount
 * without a twin, a twin without an amount, or an object with amounts and no asset.
 */
export function displayPairs(value: unknown, scales: { byId: Map<string, number>; byCode: Map<string, number> }, rootScale?: number): DisplayCheck[] {
  const out: DisplayCheck[] = [];
  const walk = (v: unknown, path: string, inherited: number | undefined): void => {
    if (Array.isArray(v)) return v.forEach((x, i) => walk(x, `${path}${i}.`, inherited));
    if (v === null || typeof v !== "object") return;
    const o = v as Record<string, unknown>;
    const own =
      (typeof o.asset_id === "string" ? scales.byId.get(o.asset_id) : undefined) ?? (typeof o.asset === "string" ? scales.byCode.get(o.asset) : undefined);
    const scale = own ?? inherited;
    for (const [k, x] of Object.entries(o)) {
      const where = `${path}${k}`;
      if (k.endsWith("_display")) {
        const base = k.slice(0, -"_display".length);
        if (!(base in o)) throw new Error(`${where}: a display twin without its amount ${base}`);
        continue;
      }
      if (RATES.includes(k)) {
        if (!(`${k}_units` in o)) throw new Error(`${where}: a rate without its _units form`);
        continue;
      }
      if (typeof x === "string" && /^-?[0-9]+$/.test(x) && !NOT_AMOUNTS.has(k) && !k.endsWith("_id") && !k.endsWith("_units")) {
        if (!(`${k}_display` in o)) throw new Error(`${where}: the amount ${x} has no ${k}_display`);
        if (scale === undefined) throw new Error(`${where}: an amount with no asset to take its scale from`);
        out.push({ path: where, units: x, display: o[`${k}_display`] as string | null, scale });
      } else if (x === null && `${k}_display` in o) {
        if (o[`${k}_display`] !== null) throw new Error(`${where}: null, but its display twin is not`);
      }
      if (!NOT_WALKED.has(k)) walk(x, `${where}.`, scale);
    }
    for (const k of RATES) {
      if (!(k in o) || o[k] === null) continue;
      if (scale === undefined) throw new Error(`${path}${k}: a rate with no asset to take its scale from`);
      out.push({ path: `${path}${k}_units`, units: o[`${k}_units`] as string, display: o[k] as string, scale });
    }
  };
  walk(value, "", rootScale);
  return out;
}

/** What a display twin must be: the integer formatted at the scale, and back to the same integer. */
export function expectedDisplay(units: string, scale: number): string {
  const display = unitsToDecimal(BigInt(units), scale);
  const negative = display.startsWith("-");
  const back = decimalToUnits(negative ? display.slice(1) : display, scale);
  if (back === undefined || (negative ? -back : back) !== BigInt(units)) throw new Error(`${display} does not read back as ${units} at scale ${scale}`);
  return display;
}

/** A CSV answer of the API (RFC 4180, one header row) as its header and one record per row, by column. */
export function parseCsv(text: string): { header: string[]; rows: Record<string, string>[] } {
  const records: string[][] = [];
  let record: string[] = [];
  let field = "";
  let quoted = false;
  const endField = () => {
    record.push(field);
    field = "";
  };
  const endRecord = () => {
    endField();
    records.push(record);
    record = [];
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted && ch === '"' && text[i + 1] === '"') {
      field += '"';
      i++;
    } else if (ch === '"') quoted = !quoted;
    else if (quoted) field += ch;
    else if (ch === ",") endField();
    else if (ch === "\r" && text[i + 1] === "\n") {
      endRecord();
      i++;
    } else field += ch;
  }
  if (field !== "" || record.length > 0) endRecord();
  const [header = [], ...rows] = records;
  return { header, rows: rows.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i] ?? ""]))) };
}
