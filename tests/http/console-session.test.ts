import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cookieHeader, csrfOf, signIn } from "../support/console-cookies.js";
import { serveOnLoopback, worldPerFile } from "../support/http.js";

/**
 * The console's session over a real loopback socket, without a browser: signing out ends the
 * session in the service, so a copy of the cookie taken before (from a shared machine, a proxy's
 * log, a stolen backup) opens nothing afterwards.
 */
const t = worldPerFile();
let origin: string;
let stop: () => Promise<void>;
beforeAll(async () => {
  const served = await serveOnLoopback(t.api, { keepGlobals: true });
  origin = served.origin;
  stop = served.close;
});
afterAll(async () => stop?.());

describe("the console's session", () => {
  it("ends on sign-out: the same cookie, sent again, is asked to sign in", async () => {
    const jar = await signIn(origin, t.w.keys.finance);
    const before = new Map(jar);
    const home = await fetch(`${origin}/console`, { headers: { cookie: cookieHeader(jar) }, redirect: "manual" });
    expect(home.status).toBe(200);
    const csrf = csrfOf(await home.text())!;
    const out = await fetch(`${origin}/console/sign-out`, {
      method: "POST",
      redirect: "manual",
      headers: { cookie: cookieHeader(jar), origin, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf }).toString(),
    });
    expect(out.status).toBe(303);
    // The copy taken before signing out: refused, for a page and for a form.
    const again = await fetch(`${origin}/console/trial-balance`, { headers: { cookie: cookieHeader(before) }, redirect: "manual" });
    expect(again.status).toBe(303);
    expect(again.headers.get("location")).toBe("/console/sign-in");
    const form = await fetch(`${origin}/console/sign-out`, {
      method: "POST",
      redirect: "manual",
      headers: { cookie: cookieHeader(before), origin, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf }).toString(),
    });
    expect(form.headers.get("location")).toBe("/console/sign-in");
    // Another session of the same key is not touched, and a new sign-in works.
    const other = await signIn(origin, t.w.keys.finance);
    expect((await fetch(`${origin}/console`, { headers: { cookie: cookieHeader(other) }, redirect: "manual" })).status).toBe(200);
  });
});
