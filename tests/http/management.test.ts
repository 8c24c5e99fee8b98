import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectStatus, testApi, world, type TestApi } from "../support/http.js";
import type { World } from "../support/security.js";

/**
 * Two listeners on one ledger: the public one serves tenants (marketplace and operator keys) and
 * the liveness checks; the management one everything, platform keys, metrics and docs included.
 */
let management: TestApi;
let pub: TestApi;
let w: World;
beforeAll(async () => {
  management = await testApi({ surface: "management" });
  w = await world(management);
  pub = await testApi({ db: management.db, surface: "public" });
});
afterAll(async () => {
  await pub.close();
  await management.close();
});

describe("the public and the management listener", () => {
  it("the public one answers tenants and the liveness checks, and refuses platform keys, metrics and docs", async () => {
    expectStatus(await pub.call("GET", "/healthz", { key: null }), 200);
    expectStatus(await pub.call("GET", "/readyz", { key: null }), 200);
    expectStatus(await pub.call("GET", "/v1/operators/o1/balances", { key: w.keys.o1 }), 200);
    expectStatus(await pub.call("POST", "/v1/usage", { key: w.keys.m1, body: w.usage("public-1") }), 201);
    for (const path of ["/metrics", "/openapi.json", "/docs", "/docs/init.js"]) {
      const res = await pub.call("GET", path, { key: null });
      expect(res.status, path).toBe(404);
      expect(res.headers.get("content-type")).toMatch(/problem\+json/);
    }
    for (const key of [w.keys.admin, w.keys.finance, undefined /* the bootstrap admin key */]) {
      const res = await pub.call("GET", "/v1/payouts", { key });
      expect(res.status).toBe(403);
      expect(res.body.detail).toMatch(/accepted on the management listener only/);
    }
    // Creating keys (a secret in the answer) is not possible on the public listener at all.
    expect((await pub.call("POST", "/v1/api-keys", { body: { name: "x", role: "finance" } })).status).toBe(403);
    // The refusals are audited like any other.
    const [row] = await management.db.query<{ n: string }>("select count(*)::text as n from audit_log where status = 403 and path = '/v1/api-keys'");
    expect(Number(row!.n)).toBeGreaterThan(0);
  });

  it("the management one serves everything", async () => {
    expectStatus(await management.call("GET", "/metrics", { key: null }), 200);
    expectStatus(await management.call("GET", "/openapi.json", { key: null }), 200);
    expectStatus(await management.call("GET", "/v1/payouts", { key: w.keys.finance }), 200);
    expectStatus(await management.call("GET", "/v1/operators/o1/balances", { key: w.keys.o1 }), 200);
  });
});
