import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { sessionStore } from "../../src/http/console/session.js";
import type { AppEnv } from "../../src/http/request-context.js";

/**
 * The console's session store alone: sessions signed out stay ended per API key, so signing in and
 * out again and again with one key (to push a stolen cookie of another person out of the list of
 * ended sessions) forgets only that key's own oldest ended sessions.
 */
describe("the console's ended sessions", () => {
  it("one key's churn never revives another key's ended session", async () => {
    const store = sessionStore("test", () => new Date("2026-12-05T10:00:00Z"));
    const app = new Hono<AppEnv>();
    app.get("/in/:key", (c) => {
      store.write(c, { apiKey: c.req.param("key"), csrf: store.token(), expiresAt: Date.parse("2026-12-05T18:00:00Z") });
      return c.text("in");
    });
    app.get("/out", (c) => {
      store.end(c);
      return c.text("out");
    });
    app.get("/read", (c) => c.text(store.read(c) ? "open" : "closed"));
    const cookieOf = (res: Response) =>
      res.headers
        .getSetCookie()
        .find((l) => l.startsWith("ledger_console_test="))!
        .split(";")[0]!;
    const read = async (cookie: string) => (await app.request("/read", { headers: { cookie } })).text();

    const victim = cookieOf(await app.request("/in/victim-key"));
    expect(await read(victim)).toBe("open");
    await app.request("/out", { headers: { cookie: victim } });
    expect(await read(victim)).toBe("closed");
    // 1,500 sign-ins and sign-outs with another key: past its own bound, its own oldest are forgotten.
    const first = cookieOf(await app.request("/in/attacker-key"));
    await app.request("/out", { headers: { cookie: first } });
    for (let i = 0; i < 1_500; i++) await app.request("/out", { headers: { cookie: cookieOf(await app.request("/in/attacker-key")) } });
    expect(await read(victim)).toBe("closed");
    expect(await read(first)).toBe("open"); // the churner's own oldest: forgotten, and it still expires with its cookie
  });
});
