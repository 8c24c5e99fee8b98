/**
 * Text placed in an HTML page: every character that could open markup or leave an attribute is
 * written as an entity, so that text a caller chose (external ids, reasons, names) is shown as it
 * is and never runs.
 */
export const escapeHtml = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");

/** Headers of a page the service renders: HTML, and nothing it could load or run (no script, no external resource). */
export const htmlPageHeaders = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'",
  "x-content-type-options": "nosniff",
};
