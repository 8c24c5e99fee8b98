import { describe, expect, it } from "vitest";
import { RateLimiter } from "../../src/http/rate-limit.js";
import { ADMIN_KEY, expectStatus, testApi } from "../support/http.js";

describe("rate limiting per API key", () => {
  it("a token bucket: a burst, then the rate, and the seconds to wait", () => {
    let now = 0;
    const limiter = new RateLimiter(2, 3, () => now);
    expect([limiter.take("k"), limiter.take("k"), limiter.take("k")]).toEqual([undefined, undefined, undefined]);
    expect(limiter.take("k")).toBe(1);
    expect(limiter.take("other")).toBeUndefined(); // per key
    now += 500; // one token back
    expect(limiter.take("k")).toBeUndefined();
    expect(limiter.take("k")).toBe(1);
    expect(new RateLimiter(0, 1, () => now).take("k")).toBeUndefined(); // 0: unlimited
  });

  it("answers 429 problem+json with Retry-After once a key's burst is spent, and other keys are not affected", async () => {
    const api = await testApi({ rateLimiter: new RateLimiter(1, 5) });
    try {
      const other = expectStatus(await api.call("POST", "/v1/api-keys", { body: { name: "f", role: "finance" } }), 201).body.secret as string;
      const answers = [];
      for (let i = 0; i < 8; i++) answers.push(await api.call("GET", "/v1/assets", { key: ADMIN_KEY }));
      const limited = answers.filter((r) => r.status === 429);
      expect(limited.length).toBeGreaterThanOrEqual(3);
      expect(limited[0]!.headers.get("content-type")).toMatch(/problem\+json/);
      expect(limited[0]!.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/);
      expect(limited[0]!.body).toMatchObject({ status: 429, code: "rate_limited" });
      expect((await api.call("GET", "/v1/assets", { key: other })).status).toBe(200);
    } finally {
      await api.close();
    }
  });
});
