import type { Principal } from "../../domain/access.js";
import { escapeHtml as e } from "../html.js";
import type { Problem } from "./api.js";

/**
 * The console's page shell: one inline stylesheet (no script, no external resource, no font to
 * fetch), a skip link, the navigation of the signed-in key's role, and the blocks of the page:
 * trusted HTML (built with `e` for every text from the API) and tables, each downloadable as CSV.
 */

export interface Column {
  key: string;
  label: string;
  /** Right-aligned, tabular digits. */
  num?: boolean;
  /** A console link for the cell (the cell's text stays escaped). */
  href?: (row: Row) => string | null;
}

export type Row = Record<string, string | number | null | undefined>;

export interface Table {
  id: string;
  caption: string;
  columns: Column[];
  rows: Row[];
  /** The CSV: the API's own (this GET path answers text/csv); without it, these columns and rows. */
  csvPath?: string;
  /** Extra columns in the CSV only (the integer amounts beside the display ones). */
  csvColumns?: Column[];
  /** An HTML cell at the end of each row (a form), not part of the CSV. */
  action?: (row: Row) => string;
}

export type Block = string | Table;

export interface Page {
  title: string;
  blocks: Block[];
  status?: number;
}

const style = `*{box-sizing:border-box}body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#111;background:#fff;margin:0}
a{color:#0645ad}a:focus,button:focus,input:focus,select:focus{outline:3px solid #c60;outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:#fff;padding:.5rem;z-index:2}
header{background:#14213d;color:#fff;padding:.6rem 1rem;display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:center}
header a{color:#fff}header .who{margin-left:auto;font-size:.9rem}header form{display:inline}
nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem 1rem}nav a[aria-current]{font-weight:700;text-decoration:underline 3px}
main{max-width:80rem;margin:0 auto;padding:1rem}h1{font-size:1.5rem;margin:.5rem 0 1rem}h2{font-size:1.15rem;margin:1.5rem 0 .5rem}
.scroll{overflow-x:auto;max-width:100%}table{border-collapse:collapse;min-width:100%;font-size:.92rem}caption{text-align:left;font-weight:600;padding:.3rem 0}
th,td{padding:.35rem .5rem;border-bottom:1px solid #ccc;text-align:left;vertical-align:top}th{background:#eef0f4}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}td.id{font-family:ui-monospace,monospace;font-size:.85em;word-break:break-all}
.csv{font-size:.88rem;margin:.25rem 0 1rem}form.filters{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:end;margin:0 0 1rem}
label{display:flex;flex-direction:column;font-size:.88rem;font-weight:600;gap:.15rem}input,select{font:inherit;padding:.3rem .4rem;border:1px solid #555;border-radius:3px}
button{font:inherit;padding:.35rem .8rem;border:1px solid #14213d;background:#14213d;color:#fff;border-radius:3px;cursor:pointer}button.secondary{background:#fff;color:#14213d}
.problem{border-left:5px solid #b00020;background:#fdecee;padding:.6rem 1rem;margin:1rem 0}.notice{border-left:5px solid #1b5e20;background:#e8f5e9;padding:.6rem 1rem;margin:1rem 0}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}dl.facts dt{font-weight:600}dl.facts dd{margin:0}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(12rem,1fr));gap:.75rem;margin:0 0 1rem}.card{border:1px solid #ccc;border-radius:4px;padding:.6rem .8rem}
.card .v{font-size:1.3rem;font-variant-numeric:tabular-nums}.card .k{font-size:.85rem;color:#333}
figure{margin:1rem 0}figcaption{font-weight:600}svg.chart{width:100%;height:auto;max-width:52rem;background:#fff}
form.inline{display:flex;flex-wrap:wrap;gap:.3rem;align-items:end}form.inline input{max-width:14rem}
@media (max-width:40rem){main{padding:.5rem}h1{font-size:1.25rem}header .who{margin-left:0}
table,tbody,tr,td,caption{display:block;min-width:0}thead{position:absolute;left:-9999px}tr{border:1px solid #ccc;border-radius:4px;margin:0 0 .6rem;padding:.3rem}
td{display:grid;grid-template-columns:minmax(6rem,40%) 1fr;gap:.5rem;border:none;padding:.2rem .3rem;text-align:left;white-space:normal;word-break:break-word}
td::before{content:attr(data-label);font-weight:600}td.num{text-align:left}}`;

export interface NavItem {
  href: string;
  label: string;
}

/** The pages of each role. Every page still asks the API, which refuses what the key may not see. */
export function navFor(p: Principal): NavItem[] {
  const platform = [
    { href: "/console/trial-balance", label: "Trial balance" },
    { href: "/console/fee-revenue", label: "Fee revenue" },
    { href: "/console/payouts", label: "Payouts" },
    { href: "/console/proposals", label: "Proposals" },
    { href: "/console/reconciliations", label: "Reconciliation" },
    { href: "/console/treasury", label: "Treasury" },
    { href: "/console/audit", label: "Audit log" },
    { href: "/console/usage-batches", label: "Usage batches" },
  ];
  if (p.role === "admin" || p.role === "finance") return platform;
  if (p.role === "operator")
    return [
      { href: "/console/earnings", label: "Earnings" },
      { href: "/console/statement", label: "Statement" },
      { href: "/console/payouts", label: "Payouts" },
    ];
  return [
    { href: "/console/customers", label: "Customers" },
    { href: "/console/usage", label: "Usage" },
    { href: "/console/usage-batches", label: "Usage batches" },
    { href: "/console/fee-schedules", label: "Fee schedules" },
  ];
}

export interface Shell {
  principal: Principal | null;
  csrf: string | null;
  path: string;
  /** The current query, for the CSV links. */
  query: URLSearchParams;
}

function header(s: Shell): string {
  if (!s.principal) return `<header><strong>Ledger console</strong></header>`;
  const nav = navFor(s.principal)
    .map((n) => `<li><a href="${n.href}"${n.href === s.path ? ' aria-current="page"' : ""}>${e(n.label)}</a></li>`)
    .join("");
  const who = `${s.principal.role}${s.principal.scopeId ? ` ${s.principal.scopeId}` : ""}`;
  return `<header><a href="/console"><strong>Ledger console</strong></a><nav aria-label="Pages"><ul>${nav}</ul></nav>
<span class="who">Signed in: ${e(who)} <form method="post" action="/console/sign-out">${csrfField(s.csrf ?? "")}<button class="secondary" type="submit">Sign out</button></form></span></header>`;
}

export const csrfField = (token: string) => `<input type="hidden" name="csrf" value="${e(token)}">`;

export function renderTable(t: Table, s: Shell): string {
  const head =
    t.columns.map((c) => `<th scope="col"${c.num ? ' class="num"' : ""}>${e(c.label)}</th>`).join("") + (t.action ? '<th scope="col">Action</th>' : "");
  const cell = (c: Column, r: Row) => {
    const v = r[c.key] === null || r[c.key] === undefined ? "" : String(r[c.key]);
    const href = c.href?.(r);
    return `<td data-label="${e(c.label)}"${c.num ? ' class="num"' : ""}>${href ? `<a href="${e(href)}">${e(v)}</a>` : e(v)}</td>`;
  };
  const body = t.rows
    .map((r) => `<tr>${t.columns.map((c) => cell(c, r)).join("")}${t.action ? `<td data-label="Action">${t.action(r)}</td>` : ""}</tr>`)
    .join("\n");
  const download = new URLSearchParams(s.query);
  download.set("download", t.id);
  const empty = `<tr><td colspan="${t.columns.length + (t.action ? 1 : 0)}">Nothing to show.</td></tr>`;
  return `<div class="scroll"><table id="${e(t.id)}"><caption>${e(t.caption)}</caption><thead><tr>${head}</tr></thead><tbody>${body || empty}</tbody></table></div>
<p class="csv"><a href="${e(`${s.path}?${download.toString()}`)}" download>Download “${e(t.caption)}” as CSV</a></p>`;
}

export function renderProblem(p: Problem): string {
  const fields = p.errors.length ? `<ul>${p.errors.map((x) => `<li><code>${e(x.path)}</code>: ${e(x.message)}</li>`).join("")}</ul>` : "";
  return `<div class="problem" role="alert"><strong>${e(String(p.status))} ${e(p.title)}</strong><p>${e(p.detail)}</p>${fields}<p><small>code: ${e(p.code)}</small></p></div>`;
}

/** What a form did, shown on the page it returns to (a fixed text per outcome: nothing from the URL is shown). */
const NOTICES: Record<string, string> = {
  approved: "Approved: the change is made.",
  rejected: "Rejected: nothing changes.",
  proposed: "Proposed: the adjustment waits for another key's approval (Proposals); the item is resolved when it is approved.",
  resolved: "Resolved.",
};

export function renderPage(page: Page, s: Shell): string {
  const done = NOTICES[s.query.get("done") ?? ""];
  const notice = done && !page.status ? `<div class="notice" role="status">${e(done)}</div>` : "";
  const blocks = notice + page.blocks.map((b) => (typeof b === "string" ? b : renderTable(b, s))).join("\n");
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${e(page.title)} · Ledger console</title><style>${style}</style></head>
<body><a class="skip" href="#main">Skip to content</a>
${header(s)}
<main id="main"><h1>${e(page.title)}</h1>
${blocks}
</main></body></html>
`;
}

/** A GET form of filters (labelled inputs, kept in the URL so that a page can be bookmarked and its CSV follows it). */
export function filterForm(path: string, fields: { name: string; label: string; value: string; type?: string; options?: string[] }[]): string {
  const input = (f: (typeof fields)[number]) =>
    f.options
      ? `<label>${e(f.label)}<select name="${e(f.name)}">${["", ...f.options].map((o) => `<option${o === f.value ? " selected" : ""} value="${e(o)}">${e(o || "any")}</option>`).join("")}</select></label>`
      : `<label>${e(f.label)}<input name="${e(f.name)}" type="${f.type ?? "text"}" value="${e(f.value)}"></label>`;
  return `<form class="filters" method="get" action="${e(path)}">${fields.map(input).join("")}<button type="submit">Show</button></form>`;
}

export const facts = (pairs: [string, string][]) => `<dl class="facts">${pairs.map(([k, v]) => `<dt>${e(k)}</dt><dd>${e(v)}</dd>`).join("")}</dl>`;

export const cards = (pairs: [string, string][]) =>
  `<div class="cards">${pairs.map(([k, v]) => `<div class="card"><div class="k">${e(k)}</div><div class="v">${e(v)}</div></div>`).join("")}</div>`;
