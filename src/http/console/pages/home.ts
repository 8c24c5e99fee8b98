import { escapeHtml as e } from "../../html.js";
import { navFor, type Page } from "../layout.js";
import type { PageCtx } from "./context.js";

/** The sign-in form and the start page of a signed-in key. */

export function signInPage(nonce: string, problem = "", status = 200): Page {
  return {
    title: "Sign in",
    status,
    blocks: [
      problem,
      `<form method="post" action="/console/sign-in" class="filters" autocomplete="off">
<input type="hidden" name="csrf" value="${e(nonce)}">
<label for="api-key">API key<input id="api-key" name="api_key" type="password" required maxlength="200" autocomplete="off" spellcheck="false"></label>
<button type="submit">Sign in</button></form>
<p>Sign in with an API key. The console shows what that key may see through the API, nothing more: a finance key sees the books,
a marketplace key its marketplace, an operator key its own earnings. The key is kept, encrypted, in a cookie of this browser
session that scripts cannot read; signing out forgets it.</p>
<p>Platform keys (admin, finance) are accepted on the management listener only.</p>`,
    ],
  };
}

const ROLE_TEXT: Record<string, string> = {
  admin: "An admin key: the books, the reports and the approvals.",
  finance:
    "A finance key: the trial balance, fee revenue, payouts, reconciliation, the treasury check and the audit log; proposals another key made wait here for your approval.",
  marketplace: "A marketplace key: your customers and their balances, your usage records and your fee schedules.",
  operator: "An operator key: what you earned, what is payable now and what waits for funds, your statement and your payouts.",
};

export async function home(ctx: PageCtx): Promise<Page> {
  const p = ctx.principal;
  const links = navFor(p)
    .map((n) => `<li><a href="${n.href}">${e(n.label)}</a></li>`)
    .join("");
  return {
    title: "Ledger console",
    blocks: [
      `<p>${e(ROLE_TEXT[p.role] ?? "")}</p>`,
      `<dl class="facts"><dt>Role</dt><dd>${e(p.role)}</dd>${p.scopeId ? `<dt>For</dt><dd>${e(p.scopeId)}</dd>` : ""}<dt>Key id</dt><dd>${e(p.keyId)}</dd></dl>`,
      `<h2>Pages</h2><ul>${links}</ul>`,
    ],
  };
}
