import type { Context } from "hono";
import { stringify } from "csv-stringify/sync";

type Cell = string | number | bigint | boolean | null | undefined;

/**
 * Text a spreadsheet would run as a formula (=, +, -, @, |, tab or CR at the start) gets a leading
 * apostrophe, unless it is a number (a negative amount stays a number). Callers choose much of the
 * text in these files (external ids, descriptions, notes).
 */
const plainText = (s: string): string => (/^[=+\-@|\t\r]/.test(s) && !/^-?\d+(\.\d+)?$/.test(s) ? `'${s}` : s);

/**
 * The one CSV writer of the API: RFC 4180 (CRLF line ends; fields with a comma, quote or line break
 * quoted), formula text made plain, booleans as true/false, null and absent as empty. Fields with a
 * semicolon or a tab are quoted too: spreadsheets in locales whose list separator is `;` split an
 * unquoted field there, and the part after it (`x;=1+1`) would start a cell of its own, a formula.
 */
export function toCsv(header: string[], rows: Cell[][]): string {
  return stringify([header, ...rows], {
    record_delimiter: "windows",
    quoted_match: /[\r\n;\t]/,
    cast: { string: plainText, boolean: (v) => String(v), bigint: (v) => v.toString(), number: (v) => String(v) },
  });
}

export function csvResponse(c: Context, filename: string, header: string[], rows: Cell[][]): Response {
  return c.body(toCsv(header, rows), 200, {
    "content-type": "text/csv; charset=utf-8",
    "content-disposition": `attachment; filename="${filename}"`,
  });
}
