import type { Context } from "hono";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { authenticate } from "../../services/api-keys.js";
import type { AppEnv } from "../request-context.js";
import { ConsoleApi, problemOf, type Problem } from "./api.js";
import { renderProblem } from "./layout.js";
import { signInPage } from "./pages/home.js";
import type { ConsoleKit, Signed } from "./kit.js";
import { SESSION_HOURS, sameToken } from "./session.js";

/**
 * The console's POST forms: sign in, sign out, decide a proposal, resolve a reconciliation item.
 * Each checks the form's CSRF token (the session's; for signing in, the sign-in cookie's) and that
 * the request comes from this origin, then does what the form says through the API, whose answer
 * (a refusal included: four_eyes, forbidden, 409) is what the person sees.
 */

type Form = Record<string, string>;

async function formOf(c: Context<AppEnv>): Promise<Form> {
  const body = await c.req.parseBody();
  const out: Form = {};
  for (const [k, v] of Object.entries(body)) if (typeof v === "string") out[k] = v;
  return out;
}

/** A browser's cross-site POST names another origin (SameSite=Strict keeps the cookie away too; this is the second lock). */
function sameOrigin(c: Context<AppEnv>): boolean {
  const origin = c.req.header("origin");
  if (origin === undefined || origin === "null") return origin === undefined;
  try {
    return new URL(origin).host === c.req.header("host");
  } catch {
    return false;
  }
}

const csrfProblem: Problem = {
  status: 403,
  title: "The form is not from this console",
  detail: "the form's token is missing or stale, or it was sent from another site: open the page again and send the form from it",
  code: "csrf",
  errors: [],
};

function refuse(c: Context<AppEnv>, k: ConsoleKit, signed: Signed | null, p: Problem, back?: string): Response {
  const link = back ? `<p><a href="${back}">Back</a></p>` : "";
  return k.html(c, { title: p.status === 403 && p.code === "csrf" ? "Refused" : "Not done", blocks: [renderProblem(p), link], status: p.status }, signed);
}

async function signIn(c: Context<AppEnv>, k: ConsoleKit): Promise<Response> {
  const form = await formOf(c);
  if (!sameOrigin(c) || !k.sessions.checkSignInNonce(c, form.csrf)) return refuse(c, k, null, csrfProblem, "/console/sign-in");
  const key = (form.api_key ?? "").trim();
  const again = (p: Problem) => k.html(c, signInPage(k.sessions.signInNonce(c), renderProblem(p), p.status), null);
  const deps = c.get("deps");
  const principal = key ? await authenticate(deps.ledger.db, key, deps.config.ADMIN_API_KEY) : undefined;
  if (!principal) return again({ status: 401, title: "Not signed in", detail: "the API key is unknown or revoked", code: "unauthorized", errors: [] });
  // Asked of the API itself, so that its listener rule (platform keys on the management listener only) decides.
  const probe = await new ConsoleApi(k.fetch, key, c.get("requestId")).call("GET", "/v1/assets?limit=1");
  if (!probe.ok) return again(problemOf(probe));
  k.sessions.write(c, { apiKey: key, csrf: k.sessions.token(), expiresAt: k.now().getTime() + SESSION_HOURS * 3_600_000 });
  return c.redirect("/console", 303);
}

/** A POST of a signed-in session with its CSRF token; answers the session and the form, or the refusal to send. */
async function checked(c: Context<AppEnv>, k: ConsoleKit): Promise<{ signed: Signed; form: Form } | Response> {
  const signed = await k.signedIn(c);
  if (!signed) return c.redirect("/console/sign-in", 303);
  const form = await formOf(c);
  if (!sameOrigin(c) || !sameToken(form.csrf, signed.session.csrf)) return refuse(c, k, signed, csrfProblem, c.req.header("referer") ? undefined : "/console");
  return { signed, form };
}

/** Sends one API call of a form; a refusal is shown with its status, success goes back to the page (303) with a notice. */
async function act(
  c: Context<AppEnv>,
  k: ConsoleKit,
  call: { path: string; body: (form: Form) => unknown; back: string; done: (body: Record<string, unknown>) => string },
) {
  const r = await checked(c, k);
  if (r instanceof Response) return r;
  const idem = /^[A-Za-z0-9-]{8,100}$/.test(r.form.idempotency_key ?? "") ? r.form.idempotency_key : undefined;
  const res = await r.signed.api.call("POST", call.path, call.body(r.form), idem);
  if (!res.ok) return refuse(c, k, r.signed, problemOf(res), call.back);
  const sep = call.back.includes("?") ? "&" : "?";
  return c.redirect(`${call.back}${sep}done=${call.done(res.body as Record<string, unknown>)}`, 303);
}

function resolveBody(f: Form) {
  const adjusting = [f.debit_account_id, f.credit_account_id, f.amount].some((v) => v && v.trim() !== "");
  return {
    note: f.note ?? "",
    ...(adjusting
      ? {
          adjustment: {
            debit_account_id: f.debit_account_id?.trim() ?? "",
            credit_account_id: f.credit_account_id?.trim() ?? "",
            amount: f.amount?.trim() ?? "",
          },
        }
      : {}),
  };
}

export function registerActions(app: OpenAPIHono<AppEnv>, k: ConsoleKit): void {
  app.post("/console/sign-in", (c) => signIn(c, k));
  app.post("/console/sign-out", async (c) => {
    const r = await checked(c, k);
    if (r instanceof Response) return r;
    k.sessions.end(c);
    return c.redirect("/console/sign-in", 303);
  });
  for (const verb of ["approve", "reject"] as const) {
    app.post(`/console/proposals/:id/${verb}`, async (c) => {
      const id = encodeURIComponent(c.req.param("id"));
      const body = (f: Form) => (f.reason && f.reason.trim() !== "" ? { reason: f.reason.trim() } : {});
      return act(c, k, { path: `/v1/proposals/${id}/${verb}`, body, back: "/console/proposals", done: () => (verb === "approve" ? "approved" : "rejected") });
    });
  }
  app.post("/console/reconciliations/:id/items/:item/resolve", async (c) => {
    const id = encodeURIComponent(c.req.param("id"));
    const item = encodeURIComponent(c.req.param("item"));
    return act(c, k, {
      path: `/v1/reconciliations/${id}/items/${item}/resolve`,
      body: resolveBody,
      back: `/console/reconciliations/${id}`,
      done: (b) => (b.proposal_id ? "proposed" : "resolved"),
    });
  });
}
