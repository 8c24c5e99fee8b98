import type { OpenAPIHono } from "@hono/zod-openapi";
import { ApiError } from "../problem.js";
import type { AppEnv } from "../request-context.js";
import { catalogEntries, exampleProblem, isProblemCode, problemPath } from "./catalog.js";
import { problemActions } from "./explanation.js";

type Entry = ReturnType<typeof catalogEntries>[number];

const escape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
/** Escaped text, with `code spans` as <code>. */
const text = (s: string) => escape(s).replace(/`([^`]+)`/g, "<code>$1</code>");

const style = `body{font:16px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}
code,pre{font-family:ui-monospace,monospace;background:#f3f3f3;border-radius:3px}code{padding:0 .2em}pre{padding:.75rem;overflow-x:auto}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.3rem .5rem;text-align:left;vertical-align:top}
.status{font-weight:600}.action{background:#eef6ee;border-left:4px solid #2e7d32;padding:.5rem .75rem}a{color:#0b57d0}`;

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escape(title)}</title><style>${style}</style></head>
<body>
${body}
</body>
</html>
`;
}

function problemPage(e: Entry): string {
  return layout(
    `${e.code}: ${e.title}`,
    `<p><a href="/problems">All problem types</a></p>
<h1>${escape(e.title)}</h1>
<p><code>type: ${problemPath(e.code)}</code> · <code>code: ${e.code}</code> · <span class="status">HTTP ${e.status}</span></p>
<h2>What it means</h2>
<p>${text(e.means)}</p>
<h2>Typical causes</h2>
<ul>${e.causes.map((c) => `<li>${text(c)}</li>`).join("")}</ul>
<h2>What to do</h2>
<div class="action"><p><strong>${escape(problemActions[e.action])}.</strong> ${text(e.todo)}</p></div>
<h2>Example</h2>
<pre>${escape(JSON.stringify(exampleProblem(e.code), null, 2))}</pre>`,
  );
}

function indexPage(entries: Entry[]): string {
  const rows = entries.map(
    (e) =>
      `<tr><td><a href="${problemPath(e.code)}"><code>${e.code}</code></a></td><td>${e.status}</td><td>${escape(e.title)}</td><td>${escape(problemActions[e.action])}</td></tr>`,
  );
  return layout(
    "Problem types",
    `<h1>Problem types</h1>
<p>Every error of this API is an <code>application/problem+json</code> document (RFC 9457) whose <code>type</code> is one of these pages.
Branch on <code>code</code> (or <code>type</code>); <code>detail</code> says, for people, what was wrong with this request, and
<code>errors</code> lists the fields at fault.</p>
<table><thead><tr><th>code</th><th>status</th><th>title</th><th>what to do</th></tr></thead>
<tbody>
${rows.join("\n")}
</tbody></table>`,
  );
}

const headers = {
  "cache-control": "public, max-age=3600",
  // Static pages of our own: no script, no external resource.
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'",
};

/**
 * `GET /problems` and `GET /problems/{code}`: a page for every problem `type`, so that the link in
 * an error answer explains it. Public (no API key) and on every listener, like the answers that
 * link to them; rendered once from the catalog.
 */
export function registerProblemPages(app: OpenAPIHono<AppEnv>): void {
  const entries = catalogEntries();
  const index = indexPage(entries);
  const pages = new Map(entries.map((e) => [e.code, problemPage(e)]));
  app.get("/problems", (c) => c.html(index, 200, headers));
  app.get("/problems/:code", (c) => {
    const code = c.req.param("code");
    if (!isProblemCode(code)) throw new ApiError("not_found", `no problem type ${code}: GET /problems lists every one`);
    return c.html(pages.get(code)!, 200, headers);
  });
}
