import type { Context } from "hono";
import { stringify } from "csv-stringify/sync";

type Cell = string | number | bigint | boolean | null | undefined;

/**
 * Text a spreadsheet would run as a formula (=, +, -, @, |, tab or CR at the start) gets a leading
 * apostrophe, unless it is a number (a negative amount stays a number). So does such a character
 * after a semicolon or a tab inside the text: a spreadsheet that splits lines on `;` (the list
 * separator of many locales) or on tabs ignores the CSV's quotes there and would start a cell
 * with it. Callers choose much of the text in these files (external ids, descriptions, notes).
 */
const plainText = (s: string): string => {
  const inner = s.replace(/([;\t])([=+\-@|\t\r])/g, "$1'$2");
  return /^[=+\-@|\t\r]/.test(inner) && !/^-?\d+(\.\d+)?$/.test(inner) ? `'${inner}` : inner;
};

/**
 * The one CSV writer of the API: RFC 4180 (CRLF line ends; fields with a comma, quote or line break
 * quoted; with a semicolon or a tab too), formula text made plain (also after a `;` or a tab inside
 * a field), booleans as true/false, null and absent as empty.
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
