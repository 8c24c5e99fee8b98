import { escapeHtml as e } from "../html.js";
import type { StatementAssetOut, StatementHeading, StatementLineOut } from "./customer-statement-schemas.js";

/**
 * A customer's statement as a printable page (format=html): self-contained (inline CSS, no script,
 * no external resource), one table per asset with its opening balance, lines, sums by type and
 * closing balance. Every text is escaped: external ids, reasons and names come from callers.
 */

const style = `*{box-sizing:border-box}body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1b1b1b;max-width:64rem;margin:2rem auto;padding:0 1rem}
h1{font-size:1.5rem;margin:0 0 .5rem}h2{font-size:1.15rem;margin:2rem 0 .5rem}
dl.heading{display:grid;grid-template-columns:max-content 1fr;gap:.15rem 1rem;margin:0 0 1rem}dl.heading dt{font-weight:600}dl.heading dd{margin:0}
table{border-collapse:collapse;width:100%}th,td{padding:.3rem .45rem;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}
th{background:#f3f3f3;font-weight:600}.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.ref{word-break:break-all;font-family:ui-monospace,monospace;font-size:.85em}tr.balance td{font-weight:600;background:#fafafa}
tfoot td{border-bottom:none}tfoot tr.balance td{border-top:2px solid #1b1b1b}.note{color:#555;font-size:.85rem;margin-top:2rem}
@media print{body{margin:0;max-width:none;font-size:10pt}@page{size:A4;margin:15mm}th,tr.balance td{background:none}
thead{display:table-header-group}tfoot{display:table-row-group}tr{break-inside:avoid}section{break-before:auto}h2{break-after:avoid}.note{color:#000}}`;

const when = (iso: string) => iso.replace("T", " ").replace(/(\.000)?Z$/, " UTC");

const TYPE_LABEL: Record<StatementLineOut["type"], string> = { deposit: "Deposit", usage: "Usage", refund: "Refund", other: "Other" };

function lineRow(l: StatementLineOut): string {
  const reference = l.external_id ?? l.reference ?? "";
  const price = l.unit_price ?? l.rate_display ?? "";
  return `<tr><td>${e(when(l.effective_at))}</td><td>${TYPE_LABEL[l.type]}</td><td>${e(l.description)}</td><td class="ref">${e(reference)}</td>
<td class="num">${e(l.quantity ?? "")}</td><td>${e(l.unit ?? "")}</td><td class="num">${e(price)}</td><td class="num">${e(l.amount_display)}</td></tr>`;
}

const sumRow = (label: string, amount: string, cls = "") =>
  `<tr${cls ? ` class="${cls}"` : ""}><td colspan="7">${e(label)}</td><td class="num">${e(amount)}</td></tr>`;

function assetSection(a: StatementAssetOut, lines: StatementLineOut[], h: StatementHeading): string {
  return `<section>
<h2>${e(a.asset)}</h2>
<table>
<thead><tr><th>Effective</th><th>Type</th><th>Description</th><th>Reference</th><th class="num">Quantity</th><th>Unit</th><th class="num">Unit price</th><th class="num">Amount (${e(a.asset)})</th></tr></thead>
<tbody>
${sumRow(`Opening balance (before ${when(h.from)})`, a.opening_display, "balance")}
${lines.map(lineRow).join("\n")}
</tbody>
<tfoot>
${sumRow("Deposits", a.deposits_display)}
${sumRow("Usage", a.usage_display)}
${sumRow("Refunds", a.refunds_display)}
${sumRow("Other", a.other_display)}
${sumRow(`Closing balance (before ${when(h.to)})`, a.closing_display, "balance")}
${a.closing_held === "0" ? "" : sumRow("of which held for running jobs", a.closing_held_display)}
</tfoot>
</table>
</section>`;
}

export function statementHtml(h: StatementHeading, assets: StatementAssetOut[], lines: StatementLineOut[]): string {
  const title = `Statement of ${h.customer_id}, ${h.from.slice(0, 10)} to ${h.to.slice(0, 10)}`;
  const sections = assets.map((a) =>
    assetSection(
      a,
      lines.filter((l) => l.asset_id === a.asset_id),
      h,
    ),
  );
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${e(title)}</title><style>${style}</style></head>
<body>
<header>
<h1>Customer statement</h1>
<dl class="heading">
<dt>Customer</dt><dd>${e(h.customer_id)} (${e(h.billing)})</dd>
<dt>Marketplace</dt><dd>${e(h.marketplace_name)} (${e(h.marketplace_id)})</dd>
<dt>Period</dt><dd>${e(when(h.from))} to ${e(when(h.to))} (effective time; the end excluded)</dd>
<dt>Generated</dt><dd>${e(when(h.generated_at))}</dd>
</dl>
</header>
${sections.length > 0 ? sections.join("\n") : "<p>No balance and no movement in this period.</p>"}
<p class="note">Amounts in each asset's units: + credited to the customer, − charged. Each line is dated by when it took effect; a
refund is dated like the usage it reverses. Balances include money held for running jobs.</p>
</body>
</html>
`;
}
