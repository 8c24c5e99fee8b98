import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectStatus, testApi, world, type TestApi } from "../support/http.js";
import type { World } from "../support/security.js";

let api: TestApi;
let w: World;
beforeAll(async () => {
  api = await testApi();
  w = await world(api);
});
afterAll(async () => api.close());

const balance = async (id: string, query = "") => expectStatus(await api.call("GET", `/v1/accounts/${id}/balance${query}`), 200).body;

describe("transfers over HTTP", () => {
  it("records a transfer and shows it in balances, entries and GET", async () => {
    const res = expectStatus(
      await api.call("POST", "/v1/transfers", {
        key: w.keys.m1,
        body: { legs: [{ debit_account_id: w.m1Customer.id, credit_account_id: w.m1Fees.id, amount: "250" }], metadata: { job: "j1" } },
      }),
      201,
    );
    expect(res.body).toMatchObject({
      type: "standard",
      status: "posted",
      metadata: { job: "j1" },
      legs: [{ amount: "250", posted_amount: "250", pending_amount: "0" }],
    });
    expect(res.headers.get("x-request-id")).toBeTruthy();
    expect(await balance(w.m1Fees.id)).toMatchObject({ posted: "250", available: "250", credits_posted: "250" });
    expect(expectStatus(await api.call("GET", `/v1/transfers/${res.body.id}`, { key: w.keys.finance }), 200).body).toEqual(res.body);
    const entries = expectStatus(await api.call("GET", `/v1/accounts/${w.m1Fees.id}/entries`), 200).body;
    expect(entries).toMatchObject({ data: [{ transfer_id: res.body.id, side: "credit", posted_amount: "250", balance_after: "250" }], next_cursor: null });
  });

  it("replays a retried request with the original status and body", async () => {
    const req = {
      key: w.keys.m1,
      idempotencyKey: "pay-once",
      body: { legs: [{ debit_account_id: w.m1Customer.id, credit_account_id: w.m1Fees.id, amount: "7" }] },
    };
    const first = expectStatus(await api.call("POST", "/v1/transfers", req), 201);
    const again = expectStatus(await api.call("POST", "/v1/transfers", req), 201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const [row] = await api.db.query<{ n: string }>("select count(*)::text as n from transfers where metadata = '{}' and id = $1", [first.body.id]);
    expect(row!.n).toBe("1");
  });

  it("holds, posts in part, and voids", async () => {
    const before = await balance(w.m1Customer.id);
    const hold = expectStatus(
      await api.call("POST", "/v1/transfers", {
        key: w.keys.m1,
        body: { type: "pending", timeout_seconds: 3600, legs: [{ debit_account_id: w.m1Customer.id, credit_account_id: w.m1Fees.id, amount: "1000" }] },
      }),
      201,
    ).body;
    expect(hold).toMatchObject({ type: "pending", status: "pending", legs: [{ amount: "1000", pending_amount: "1000" }] });
    expect(hold.timeout_at).toBeTruthy();
    expect(BigInt((await balance(w.m1Customer.id)).available)).toBe(BigInt(before.available) - 1000n);
    const post = expectStatus(await api.call("POST", `/v1/transfers/${hold.id}/post`, { key: w.keys.m1, body: { amount: "400" } }), 201).body;
    expect(post).toMatchObject({ type: "post_pending", pending_id: hold.id, legs: [{ posted_amount: "400", pending_amount: "-1000" }] });
    expect(expectStatus(await api.call("GET", `/v1/transfers/${hold.id}`), 200).body.status).toBe("posted");
    expect(BigInt((await balance(w.m1Customer.id)).available)).toBe(BigInt(before.available) - 400n);

    const hold2 = expectStatus(
      await api.call("POST", "/v1/transfers", {
        key: w.keys.m1,
        body: { type: "pending", legs: [{ debit_account_id: w.m1Customer.id, credit_account_id: w.m1Fees.id, amount: "5" }] },
      }),
      201,
    ).body;
    // A body is optional on void.
    expectStatus(await api.call("POST", `/v1/transfers/${hold2.id}/void`, { key: w.keys.m1 }), 201);
    expect(expectStatus(await api.call("GET", `/v1/transfers/${hold2.id}`), 200).body.status).toBe("voided");
  });

  it("reverses a transfer, referencing it", async () => {
    const t = expectStatus(
      await api.call("POST", "/v1/transfers", {
        key: w.keys.m1,
        body: { legs: [{ debit_account_id: w.m1Customer.id, credit_account_id: w.m1Fees.id, amount: "33" }] },
      }),
      201,
    ).body;
    const r = expectStatus(await api.call("POST", `/v1/transfers/${t.id}/reverse`, { key: w.keys.m1, body: { metadata: { reason: "duplicate" } } }), 201).body;
    expect(r).toMatchObject({
      type: "reversal",
      reverses_id: t.id,
      legs: [{ debit_account_id: w.m1Fees.id, credit_account_id: w.m1Customer.id, amount: "33" }],
    });
    expect(expectStatus(await api.call("GET", `/v1/transfers/${t.id}`), 200).body.status).toBe("reversed");
  });

  it("writes a batch in one go with one result per item", async () => {
    const legs = (amount: string) => [{ debit_account_id: w.m1Customer.id, credit_account_id: w.m1Fees.id, amount }];
    const res = expectStatus(
      await api.call("POST", "/v1/transfers", {
        key: w.keys.m1,
        body: { transfers: [{ legs: legs("1") }, { legs: legs("999999999999") }, { legs: legs("2") }] },
      }),
      200,
    ).body;
    expect(res.results.map((r: { status: string }) => r.status)).toEqual(["created", "refused", "created"]);
    expect(res.results[1].error).toMatchObject({ code: "exceeds_credits", status: 422 });
  });

  it("reads balances as of an effective instant", async () => {
    const acct = expectStatus(
      await api.call("POST", "/v1/accounts", { key: w.keys.m1, body: { asset_id: w.asset.id, code: "test", normal_side: "credit" } }),
      201,
    ).body;
    expectStatus(
      await api.call("POST", "/v1/transfers", {
        key: w.keys.m1,
        body: { effective_at: "2026-01-10T00:00:00Z", legs: [{ debit_account_id: w.m1Funding.id, credit_account_id: acct.id, amount: "10" }] },
      }),
      201,
    );
    expect(await balance(acct.id, "?as_of=2026-01-09T23:59:59Z")).toMatchObject({ posted: "0", as_of: "2026-01-09T23:59:59.000Z" });
    expect(await balance(acct.id, "?as_of=2026-01-10T00:00:00Z")).toMatchObject({ posted: "10" });
  });
});

describe("accounts, assets and keys over HTTP", () => {
  it("opens an account idempotently by ref, scoped to the marketplace", async () => {
    const body = { asset_id: w.asset.id, code: "customer_wallet", normal_side: "credit", ref: "wallet:c77", debits_must_not_exceed_credits: true };
    const a = expectStatus(await api.call("POST", "/v1/accounts", { key: w.keys.m1, body }), 201).body;
    expect(a).toMatchObject({ marketplace_id: "m1", ref: "wallet:c77", opened_by_service: false });
    // Same ref, new request key: the same account. Same ref in m2: a different account.
    expect(expectStatus(await api.call("POST", "/v1/accounts", { key: w.keys.m1, body }), 201).body.id).toBe(a.id);
    expect(expectStatus(await api.call("POST", "/v1/accounts", { key: w.keys.m2, body }), 201).body.id).not.toBe(a.id);
    expect(expectStatus(await api.call("GET", `/v1/accounts/${a.id}`, { key: w.keys.m1 }), 200).body).toEqual(a);
  });

  it("lists assets with a cursor", async () => {
    for (const code of ["A1", "A2", "A3"])
      expectStatus(await api.call("POST", "/v1/assets", { body: { code, scale: 2, settlement: { kind: "offchain" } } }), 201);
    const p1 = expectStatus(await api.call("GET", "/v1/assets?limit=2", { key: w.keys.o1 }), 200).body;
    expect(p1.data.map((a: { code: string }) => a.code)).toEqual(["A1", "A2"]);
    const p2 = expectStatus(await api.call("GET", `/v1/assets?limit=2&cursor=${p1.next_cursor}`, { key: w.keys.o1 }), 200).body;
    expect(p2.data.map((a: { code: string }) => a.code)).toEqual(["A3", "USDC"]);
  });

  it("creates a key whose secret is shown once, and lists keys without secrets", async () => {
    const created = expectStatus(
      await api.call("POST", "/v1/api-keys", { idempotencyKey: "k1", body: { name: "ops", role: "operator", scope_id: "o1" } }),
      201,
    ).body;
    expect(created.secret).toMatch(/^lk_[0-9a-f]{16}_/);
    const replay = expectStatus(
      await api.call("POST", "/v1/api-keys", { idempotencyKey: "k1", body: { name: "ops", role: "operator", scope_id: "o1" } }),
      201,
    ).body;
    expect(replay).toEqual({ ...created, secret: null });
    const list = expectStatus(await api.call("GET", "/v1/api-keys?limit=1000"), 200).body;
    expect(list.data.find((k: { id: string }) => k.id === created.id)).toMatchObject({ role: "operator", scope_id: "o1", revoked_at: null });
    expect(JSON.stringify(list)).not.toContain(created.secret);
  });
});

describe("operations", () => {
  it("answers health, readiness, metrics, the OpenAPI document and the docs page without a key", async () => {
    expect((await api.call("GET", "/healthz", { key: null })).body).toEqual({
      status: "ok",
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    const ready = (await api.call("GET", "/readyz", { key: null })).body;
    expect(ready, `readyz answered ${JSON.stringify(ready)}`).toMatchObject({ status: "ok", time: expect.any(String) });
    const metrics = await api.call("GET", "/metrics", { key: null });
    expect(metrics.body).toMatch(/http_requests_total\{method="POST",route="\/v1\/transfers",status="201"\} \d+/);
    const doc = (await api.call("GET", "/openapi.json", { key: null })).body;
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toContain("/v1/transfers");
    const docs = await api.call("GET", "/docs", { key: null });
    expect(docs.body).toContain("/docs/swagger-ui-bundle.js");
    expect(docs.body).not.toMatch(/https?:\/\//);
    const bundle = await api.app.request("/docs/swagger-ui-bundle.js");
    expect(bundle.status).toBe(200);
    expect((await bundle.text()).length).toBeGreaterThan(100_000);
  });
});
