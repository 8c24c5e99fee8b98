import type { Context } from "hono";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { authenticate } from "../../services/api-keys.js";
import { toCsv } from "../csv.js";
import { htmlPageHeaders } from "../html.js";
import type { AppEnv } from "../request-context.js";
import { ConsoleApi, ProblemAnswer, type ApiFetch } from "./api.js";
import { registerActions } from "./actions.js";
import { renderPage, renderProblem, type Page, type Shell, type Table } from "./layout.js";
import { home, signInPage } from "./pages/home.js";
import { proposal, proposals, reconciliation, reconciliations } from "./pages/approvals.js";
import { auditLog, feeRevenue, treasury, trialBalance } from "./pages/finance.js";
import { customers, feeSchedules, usage } from "./pages/marketplace.js";
import { usageBatch, usageBatches } from "./pages/usage-batches.js";
import { earnings, statement } from "./pages/operator.js";
import { payout, payouts } from "./pages/payouts.js";
import type { PageFn } from "./pages/context.js";
import { sessionStore } from "./session.js";
import type { ConsoleKit } from "./kit.js";

/**
 * The web console (docs/console.md) under /console: server-rendered pages, no script. Each page
 * asks the API in-process with the signed-in key, so what a page shows is what the API lets that
 * key see on this listener (a platform key is refused on the public one, as by the API).
 */

const PAGES: Record<string, PageFn> = {
  "/console": home,
  "/console/trial-balance": trialBalance,
  "/console/fee-revenue": feeRevenue,
  "/console/treasury": treasury,
  "/console/audit": auditLog,
  "/console/proposals": proposals,
  "/console/proposals/:id": proposal,
  "/console/reconciliations": reconciliations,
  "/console/reconciliations/:id": reconciliation,
  "/console/payouts": payouts,
  "/console/payouts/:id": payout,
  "/console/earnings": earnings,
  "/console/statement": statement,
  "/console/customers": customers,
  "/console/usage": usage,
  "/console/usage-batches": usageBatches,
  "/console/usage-batches/:id": usageBatch,
  "/console/fee-schedules": feeSchedules,
};

export const consoleHeaders = {
  ...htmlPageHeaders,
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "cache-control": "no-store",
  "referrer-policy": "same-origin",
  "x-frame-options": "DENY",
};

function kit(app: OpenAPIHono<AppEnv>, surface: string, now: () => Date): ConsoleKit {
  const sessions = sessionStore(surface, now);
  const fetch: ApiFetch = (path, init) => app.request(path, init);
  return {
    sessions,
    fetch,
    now,
    async signedIn(c) {
      const session = sessions.read(c);
      if (!session) return null;
      const deps = c.get("deps");
      const principal = await authenticate(deps.ledger.db, session.apiKey, deps.config.ADMIN_API_KEY);
      if (!principal) return null;
      return { session, principal, api: new ConsoleApi(fetch, session.apiKey, c.get("requestId")) };
    },
    html(c, page, signed) {
      const shell: Shell = {
        principal: signed?.principal ?? null,
        csrf: signed?.session.csrf ?? null,
        path: c.req.path,
        query: new URL(c.req.url).searchParams,
      };
      return c.body(renderPage(page, shell), (page.status ?? 200) as 200, consoleHeaders);
    },
  };
}

/** A table of the page as CSV: the API's own CSV when the table has one, else its columns and rows. */
async function download(c: Context<AppEnv>, api: ConsoleApi, table: Table): Promise<Response> {
  if (table.csvPath) {
    const res = await api.call("GET", table.csvPath);
    if (res.ok) {
      return c.body(res.text, 200, {
        "content-type": res.headers.get("content-type") ?? "text/csv; charset=utf-8",
        "content-disposition": res.headers.get("content-disposition") ?? `attachment; filename="${table.id}.csv"`,
        "cache-control": "no-store",
      });
    }
  }
  const columns = [...table.columns, ...(table.csvColumns ?? [])];
  const csv = toCsv(
    columns.map((col) => col.key),
    table.rows.map((r) => columns.map((col) => (r[col.key] === undefined ? null : r[col.key]))),
  );
  return c.body(csv, 200, {
    "content-type": "text/csv; charset=utf-8",
    "content-disposition": `attachment; filename="${table.id}.csv"`,
    "cache-control": "no-store",
  });
}

function showPage(k: ConsoleKit, fn: PageFn) {
  return async (c: Context<AppEnv>) => {
    const signed = await k.signedIn(c);
    if (!signed) return c.redirect("/console/sign-in", 303);
    const q = new URL(c.req.url).searchParams;
    const ctx = {
      api: signed.api,
      principal: signed.principal,
      q,
      params: c.req.param() as Record<string, string>,
      csrf: signed.session.csrf,
      now: k.now(),
      path: c.req.path,
    };
    let page: Page;
    try {
      page = await fn(ctx);
    } catch (err) {
      if (!(err instanceof ProblemAnswer)) throw err;
      page = { title: "Not available to this key", blocks: [renderProblem(err.problem)], status: err.problem.status };
    }
    const wanted = q.get("download");
    if (wanted !== null) {
      const table = page.blocks.find((b): b is Table => typeof b !== "string" && b.id === wanted);
      if (table && !page.status) return download(c, signed.api, table);
      if (!page.status)
        page = {
          ...page,
          status: 404,
          blocks: [
            renderProblem({ status: 404, title: "No such table", detail: `this page has no table '${wanted}'`, code: "not_found", errors: [] }),
            ...page.blocks,
          ],
        };
    }
    return k.html(c, page, signed);
  };
}

/** Registers the console on the app (every listener: what a key sees follows the API's rules of that listener). */
export function registerConsole(app: OpenAPIHono<AppEnv>, surface: string, now: () => Date): void {
  const k = kit(app, surface, now);
  app.get("/console/", (c) => c.redirect("/console", 301));
  app.get("/console/sign-in", async (c) => {
    const signed = await k.signedIn(c);
    if (signed) return c.redirect("/console", 303);
    return k.html(c, signInPage(k.sessions.signInNonce(c)), null);
  });
  registerActions(app, k);
  for (const [path, fn] of Object.entries(PAGES)) app.get(path, showPage(k, fn));
}
