import { describe, expect, it } from "vitest";
import type { Queryable } from "../../src/db/client.js";
import { databaseReachable } from "../../src/services/health.js";

/** A database whose queries never answer, as behind a pooler whose server is down (a fake: the bound is the service's own logic). */
const silent: Queryable = {
  query: () => new Promise(() => {}),
  queryValues: () => new Promise(() => {}),
};

describe("readiness", () => {
  it("says the database is unreachable when it does not answer within the bound, instead of waiting with it", async () => {
    const started = performance.now();
    const r = await databaseReachable(silent, 100);
    expect(r.reachable).toBe(false);
    expect(String((r as { error: unknown }).error)).toContain("did not answer within 100 ms");
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("says it is reachable when it answers, and reports a failure as it is", async () => {
    expect(await databaseReachable({ query: async () => [], queryValues: async () => [] }, 100)).toEqual({ reachable: true });
    const refused = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    const r = await databaseReachable({ query: () => Promise.reject(refused), queryValues: () => Promise.reject(refused) }, 100);
    expect(r).toEqual({ reachable: false, error: refused });
  });
});
