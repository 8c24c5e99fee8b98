import type { Context } from "hono";

/**
 * RFC 4180 CSV: fields with a comma, quote or line break are quoted. Text that a spreadsheet would
 * run as a formula (=, +, -, @ at the start) is prefixed with an apostrophe, unless it is a number.
 */
export function toCsv(header: string[], rows: Array<Array<string | number | bigint | boolean | null | undefined>>): string {
  const cell = (v: string | number | bigint | boolean | null | undefined): string => {
    if (v === null || v === undefined) return "";
    let s = String(v);
    if (/^[=+\-@\t\r]/.test(s) && !/^-?\d+(\.\d+)?$/.test(s)) s = `'${s}`;
    return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
  };
  return [header, ...rows].map((r) => r.map(cell).join(",")).join("\r\n") + "\r\n";
}

export function csvResponse(c: Context, filename: string, header: string[], rows: Parameters<typeof toCsv>[1]): Response {
  return c.body(toCsv(header, rows), 200, {
    "content-type": "text/csv; charset=utf-8",
    "content-disposition": `attachment; filename="${filename}"`,
  });
}
