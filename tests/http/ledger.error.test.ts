import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectRefused, expectStatus, testApi, world, writeCounts, type ApiResponse, type TestApi } from "../support/http.js";
import type { World } from "../support/security.js";
import { ago, ahead } from "../support/clock.js";

let api: TestApi;
let w: World;
beforeAll(async () => {
  api = await testApi();
  w = await world(api);
});
afterAll(async () => api.close());

const refused = (request: () => Promise<ApiResponse>, status: number, code: string, field?: string) => expectRefused(api, request, status, code, field);

const leg = (amount: unknown) => ({ legs: [{ debit_account_id: w.m1Customer.id, credit_account_id: w.m1Fees.id, amount }] });
const transfer =
  (body: unknown, extra: Record<string, unknown> = {}) =>
  () =>
    api.call("POST", "/v1/transfers", { key: w.keys.m1, body, ...extra });

describe("bad transfer requests: a clear 4xx, nothing written", () => {
  it("malformed JSON", () => refused(() => api.call("POST", "/v1/transfers", { key: w.keys.m1, raw: '{"legs": [' }), 400, "malformed_json"));
  it("malformed JSON: the answer says where it breaks", async () => {
    const r = await api.call("POST", "/v1/transfers", { key: w.keys.m1, raw: '{\n  "legs": []\n  "metadata": {}\n}' });
    expect(r.status).toBe(400);
    expect(r.body.detail).toMatch(/line 3, column 3/);
    const cut = await api.call("POST", "/v1/transfers", { key: w.keys.m1, raw: '{"legs": [' });
    expect(cut.body.detail).toMatch(/ends before the JSON value is complete/);
  });
  it("a body that is not an object says what it is", async () => {
    const r = await api.call("POST", "/v1/transfers", { key: w.keys.m1, raw: "[1, 2]" });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([{ path: "(body)", message: "must be a JSON object, not an array" }]);
  });
  it("a method a route does not take is a 405 naming the ones it takes, after the key is checked", async () => {
    const r = await api.call("DELETE", "/v1/assets", { key: w.keys.m1 });
    expect(r.status).toBe(405);
    expect(r.body.code).toBe("method_not_allowed");
    expect(r.headers.get("allow")).toBe("GET, POST");
    expect(r.body.detail).toBe("/v1/assets takes GET, POST, not DELETE");
    expect((await api.call("PUT", `/v1/transfers/${w.m1Customer.id}`, { key: w.keys.m1, body: {} })).status).toBe(405);
    expect((await api.call("DELETE", "/v1/assets", { key: null })).status).toBe(401);
    expect((await api.call("GET", "/v1/no-such-thing", { key: w.keys.m1 })).status).toBe(404);
  });
  it("an empty JSON body is called empty", async () => {
    const r = await api.call("POST", "/v1/transfers", { key: w.keys.m1, raw: "", headers: { "content-type": "application/json" } });
    expect(r.status).toBe(400);
    expect(r.body.detail).toMatch(/body is empty/);
  });
  it("wrong content type", () =>
    refused(
      () => api.call("POST", "/v1/transfers", { key: w.keys.m1, raw: "legs=1", headers: { "content-type": "application/x-www-form-urlencoded" } }),
      415,
      "unsupported_media_type",
    ));
  it("no body", () => refused(() => api.call("POST", "/v1/transfers", { key: w.keys.m1 }), 400, "invalid_request"));
  it("oversized body", () =>
    refused(
      () => api.call("POST", "/v1/transfers", { key: w.keys.m1, body: { ...leg("1"), metadata: { pad: "x".repeat(1_100_000) } } }),
      413,
      "payload_too_large",
    ));
  it("unknown field", () => refused(transfer({ ...leg("1"), colour: "red" }), 400, "invalid_request", "colour"));
  it("unknown field in a leg", () =>
    refused(
      transfer({ legs: [{ debit_account_id: w.m1Customer.id, credit_account_id: w.m1Fees.id, amount: "1", memo: "x" }] }),
      400,
      "invalid_request",
      "legs.0.memo",
    ));
  it("amount as a JSON number", async () => {
    const res = await refused(transfer(leg(1000)), 400, "invalid_request", "legs.0.amount");
    expect(res.body.detail).toMatch(/string/);
  });
  it("amount with decimals", async () => {
    const res = await refused(transfer(leg("10.5")), 400, "invalid_request", "legs.0.amount");
    expect(res.body.detail).toMatch(/decimal point/);
  });
  it("negative amount", () => refused(transfer(leg("-5")), 400, "invalid_request", "legs.0.amount"));
  it("zero amount", () => refused(transfer(leg("0")), 400, "invalid_request", "legs.0.amount"));
  it("amount past uint256", () => refused(transfer(leg((1n << 256n).toString())), 400, "invalid_request", "legs.0.amount"));
  it("amount in exponent form", () => refused(transfer(leg("1e6")), 400, "invalid_request", "legs.0.amount"));
  it("wrong type of legs", () => refused(transfer({ legs: "all of them" }), 400, "invalid_request", "legs"));
  it("no legs", () => refused(transfer({ legs: [] }), 400, "invalid_request", "legs"));
  it("bad account id", () =>
    refused(
      transfer({ legs: [{ debit_account_id: "nope", credit_account_id: w.m1Fees.id, amount: "1" }] }),
      400,
      "invalid_request",
      "legs.0.debit_account_id",
    ));
  it("debit and credit the same account", () =>
    refused(transfer({ legs: [{ debit_account_id: w.m1Fees.id, credit_account_id: w.m1Fees.id, amount: "1" }] }), 400, "invalid_request", "legs.0"));
  it("timeout on a standard transfer", () => refused(transfer({ ...leg("1"), timeout_seconds: 60 }), 400, "invalid_request", "timeout_seconds"));
  it("bad effective_at", () => refused(transfer({ ...leg("1"), effective_at: "yesterday" }), 400, "invalid_request", "effective_at"));
  it("metadata that is not an object", () => refused(transfer({ ...leg("1"), metadata: [1, 2] }), 400, "invalid_request", "metadata"));
  it("unknown account", () =>
    refused(
      transfer({ legs: [{ debit_account_id: w.m1Customer.id, credit_account_id: "01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e", amount: "1" }] }),
      404,
      "account_not_found",
    ));
  it("accounts of different assets", async () => {
    const eur = expectStatus(await api.call("POST", "/v1/assets", { body: { code: "EUR", scale: 2, settlement: { kind: "offchain" } } }), 201).body;
    const e = expectStatus(await api.call("POST", "/v1/accounts", { key: w.keys.m1, body: { asset_id: eur.id, code: "x", normal_side: "credit" } }), 201).body;
    await refused(transfer({ legs: [{ debit_account_id: w.m1Customer.id, credit_account_id: e.id, amount: "1" }] }), 422, "asset_mismatch");
  });
  it("insufficient funds", () => refused(transfer(leg("1000000000000")), 422, "exceeds_credits"));
  it("no Idempotency-Key", () => refused(transfer(leg("1"), { idempotencyKey: null }), 400, "idempotency_key_required"));
  it("an Idempotency-Key reused for another request", async () => {
    expectStatus(await transfer(leg("1"), { idempotencyKey: "reuse" })(), 201);
    await refused(transfer(leg("2"), { idempotencyKey: "reuse" }), 409, "idempotency_key_reused");
  });
  it("a batch that is too large", () => refused(transfer({ transfers: Array.from({ length: 1001 }, () => leg("1")) }), 400, "invalid_request", "transfers"));
  it("a bad item in a batch", () => refused(transfer({ transfers: [leg("1"), leg(2)] }), 400, "invalid_request", "transfers.1.legs.0.amount"));
});

describe("bad requests on holds and reversals", () => {
  it("posting more than the hold, twice, or something that is not a hold", async () => {
    const hold = expectStatus(await api.call("POST", "/v1/transfers", { key: w.keys.m1, body: { type: "pending", ...leg("10") } }), 201).body;
    await refused(() => api.call("POST", `/v1/transfers/${hold.id}/post`, { key: w.keys.m1, body: { amount: "11" } }), 422, "post_amount_exceeds_pending");
    await refused(() => api.call("POST", `/v1/transfers/${hold.id}/post`, { key: w.keys.m1, body: { amount: 5 } }), 400, "invalid_request", "amount");
    expectStatus(await api.call("POST", `/v1/transfers/${hold.id}/post`, { key: w.keys.m1, body: {} }), 201);
    await refused(() => api.call("POST", `/v1/transfers/${hold.id}/void`, { key: w.keys.m1 }), 409, "pending_already_posted");
    await refused(() => api.call("POST", `/v1/transfers/${w.fund.id}/post`, { key: w.keys.m1 }), 422, "not_pending");
    await refused(() => api.call("POST", `/v1/transfers/${hold.id}/reverse`, { key: w.keys.m1 }), 422, "not_reversible");
  });
  it("reversing twice", async () => {
    const t = expectStatus(await transfer(leg("3"))(), 201).body;
    expectStatus(await api.call("POST", `/v1/transfers/${t.id}/reverse`, { key: w.keys.m1 }), 201);
    await refused(() => api.call("POST", `/v1/transfers/${t.id}/reverse`, { key: w.keys.m1 }), 409, "already_reversed");
  });
  it("an effective time more than 5 minutes ahead of the service's clock: a transfer, a batch item, a post, a reversal", async () => {
    const far = ahead(6 * 60_000).toISOString();
    await refused(transfer({ ...leg("1"), effective_at: "9999-12-31T23:59:59Z" }), 400, "invalid_request", "effective_at");
    await refused(transfer({ ...leg("1"), effective_at: far }), 400, "invalid_request", "effective_at");
    await refused(transfer({ type: "pending", ...leg("1"), effective_at: far }), 400, "invalid_request", "effective_at");
    const batch = expectStatus(await transfer({ transfers: [{ ...leg("1"), effective_at: far }] })(), 200).body;
    expect(batch.results[0]).toMatchObject({ status: "refused", error: { code: "invalid_request", errors: [{ path: "effective_at" }] } });
    const hold = expectStatus(await transfer({ type: "pending", ...leg("2") })(), 201).body;
    await refused(
      () => api.call("POST", `/v1/transfers/${hold.id}/post`, { key: w.keys.m1, body: { effective_at: far } }),
      400,
      "invalid_request",
      "effective_at",
    );
    const t = expectStatus(await transfer(leg("2"))(), 201).body;
    await refused(
      () => api.call("POST", `/v1/transfers/${t.id}/reverse`, { key: w.keys.m1, body: { effective_at: far } }),
      400,
      "invalid_request",
      "effective_at",
    );
    // Within the clocks' skew: accepted.
    expectStatus(await transfer({ ...leg("1"), effective_at: ahead(4 * 60_000).toISOString() })(), 201);
  });
  it("a reversal effective before the transfer it reverses, or a post before its hold", async () => {
    const t = expectStatus(await transfer({ ...leg("2"), effective_at: ago(3_600_000).toISOString() })(), 201).body;
    for (const at of ["1970-01-01T00:00:00Z", new Date(new Date(t.effective_at).getTime() - 1).toISOString()]) {
      const r = await refused(
        () => api.call("POST", `/v1/transfers/${t.id}/reverse`, { key: w.keys.m1, body: { effective_at: at } }),
        400,
        "invalid_request",
        "effective_at",
      );
      expect(r.body.detail).toMatch(new RegExp(`before that of transfer ${t.id} it reverses`));
    }
    const hold = expectStatus(await transfer({ type: "pending", ...leg("2"), effective_at: ago(3_600_000).toISOString() })(), 201).body;
    await refused(
      () => api.call("POST", `/v1/transfers/${hold.id}/post`, { key: w.keys.m1, body: { effective_at: ago(7_200_000).toISOString() } }),
      400,
      "invalid_request",
      "effective_at",
    );
    // At the original's instant or after: accepted.
    expectStatus(await api.call("POST", `/v1/transfers/${hold.id}/post`, { key: w.keys.m1, body: { effective_at: hold.effective_at } }), 201);
    const rev = expectStatus(await api.call("POST", `/v1/transfers/${t.id}/reverse`, { key: w.keys.m1, body: { effective_at: t.effective_at } }), 201).body;
    expect(rev.effective_at).toBe(t.effective_at);
  });
  it("a path id that is not a uuid", () => refused(() => api.call("POST", "/v1/transfers/123/void", { key: w.keys.m1 }), 400, "invalid_request", "id"));
  it("an unknown transfer", () => refused(() => api.call("GET", "/v1/transfers/01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e"), 404, "transfer_not_found"));
});

describe("bad requests elsewhere", () => {
  it("an unknown route", () => refused(() => api.call("GET", "/v1/nothing-here"), 404, "not_found"));
  it("an asset with too many decimals of scale, or a bad code", async () => {
    await refused(() => api.call("POST", "/v1/assets", { body: { code: "X", scale: 78, settlement: { kind: "offchain" } } }), 400, "invalid_request", "scale");
    await refused(
      () => api.call("POST", "/v1/assets", { body: { code: "bad code", scale: 2, settlement: { kind: "offchain" } } }),
      400,
      "invalid_request",
      "code",
    );
    await refused(
      () => api.call("POST", "/v1/assets", { body: { code: "X", scale: 2, settlement: { kind: "erc20", chain_id: 1, token_address: "0x12" } } }),
      400,
      "invalid_request",
      "settlement.token_address",
    );
  });
  it("the same asset code with another scale", () =>
    refused(() => api.call("POST", "/v1/assets", { body: { code: "USDC", scale: 18, settlement: { kind: "offchain" } } }), 409, "asset_exists"));
  it("an account of an unknown asset", () =>
    refused(
      () => api.call("POST", "/v1/accounts", { key: w.keys.m1, body: { asset_id: "01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e", code: "x", normal_side: "credit" } }),
      404,
      "asset_not_found",
    ));
  it("an account with both limits", () =>
    refused(
      () =>
        api.call("POST", "/v1/accounts", {
          key: w.keys.m1,
          body: { asset_id: w.asset.id, code: "x", normal_side: "credit", debits_must_not_exceed_credits: true, credits_must_not_exceed_debits: true },
        }),
      400,
      "invalid_request",
      "credits_must_not_exceed_debits",
    ));
  it("an account ref reused with other attributes", () =>
    refused(
      () => api.call("POST", "/v1/accounts", { key: w.keys.m1, body: { asset_id: w.asset.id, code: "other", normal_side: "credit", ref: "wallet:c1" } }),
      409,
      "account_exists",
    ));
  it("a balance as of a bad date", () =>
    refused(() => api.call("GET", `/v1/accounts/${w.m1Customer.id}/balance?as_of=tomorrow`), 400, "invalid_request", "as_of"));
  it("a bad cursor or limit", async () => {
    await refused(() => api.call("GET", `/v1/accounts/${w.m1Customer.id}/entries?cursor=zzz`), 400, "invalid_request", "cursor");
    await refused(() => api.call("GET", `/v1/accounts/${w.m1Customer.id}/entries?limit=0`), 400, "invalid_request", "limit");
    await refused(() => api.call("GET", `/v1/accounts/${w.m1Customer.id}/entries?limit=ten`), 400, "invalid_request", "limit");
  });
  it("a key without the scope its role needs", () =>
    refused(() => api.call("POST", "/v1/api-keys", { body: { name: "m", role: "marketplace" } }), 400, "invalid_request", "scope_id"));
  it("revoking an unknown key", () => refused(() => api.call("POST", "/v1/api-keys/01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e/revoke"), 404, "not_found"));
});

describe("idempotency keys of single and batch requests never collide", () => {
  it("a single request whose key spells a batch item's key is a new request", async () => {
    const body = { legs: [{ debit_account_id: w.m1Customer.id, credit_account_id: w.m1Fees.id, amount: "2" }] };
    const batch = expectStatus(await api.call("POST", "/v1/transfers", { key: w.keys.m1, idempotencyKey: "K", body: { transfers: [body, body] } }), 200).body;
    const single = expectStatus(await api.call("POST", "/v1/transfers", { key: w.keys.m1, idempotencyKey: "K|0", body }), 201);
    expect(single.headers.get("idempotent-replayed")).toBeNull();
    expect(single.body.id).not.toBe(batch.results[0].transfer.id);
    const other = expectStatus(await api.call("POST", "/v1/transfers", { key: w.keys.m1, idempotencyKey: "K#1", body }), 201);
    expect(other.body.id).not.toBe(batch.results[1].transfer.id);
  });

  it("accepts Idempotency-Keys of the full documented length for transfers", async () => {
    const body = { transfers: [{ legs: [{ debit_account_id: w.m1Customer.id, credit_account_id: w.m1Fees.id, amount: "1" }] }] };
    const res = expectStatus(await api.call("POST", "/v1/transfers", { key: w.keys.m1, idempotencyKey: "k".repeat(255), body }), 200);
    expect(res.body.results[0].status).toBe("created");
  });
});

describe("bodies that are not what they seem", () => {
  const raw =
    (text: string, headers: Record<string, string> = {}) =>
    () =>
      api.call("POST", "/v1/transfers", { key: w.keys.m1, raw: text, headers });
  const body = () =>
    JSON.stringify({ legs: [{ debit_account_id: w.m1Customer.id, credit_account_id: w.m1Fees.id, amount: "1" }], metadata: { note: "__X__" } });
  it("a lone surrogate in a string", () => refused(raw(body().replace("__X__", "\\ud800")), 400, "invalid_request"));
  it("a lone surrogate in an account ref", () =>
    refused(
      () =>
        api.call("POST", "/v1/accounts", {
          key: w.keys.m1,
          raw: JSON.stringify({ asset_id: w.asset.id, code: "x", normal_side: "credit", ref: "__X__" }).replace("__X__", "\\udc00"),
        }),
      400,
      "invalid_request",
    ));
  it("5,000 nested objects", () => refused(raw(body().replace('"__X__"', '{"a":'.repeat(5000) + "1" + "}".repeat(5000))), 400, "invalid_request"));
  it("a number beyond the largest double (it would read as Infinity, stored as null)", () =>
    refused(raw(body().replace('"__X__"', '{"x":[1,1e400]}')), 400, "invalid_request", "metadata.note.x.1"));
  it("a whole number beyond 2^53 - 1 (it would lose digits)", () =>
    refused(raw(body().replace('"__X__"', "12345678901234567890")), 400, "invalid_request", "metadata.note"));
  it("a whole number written with an exponent beyond 2^53 - 1 (1e300 is not exactly 10^300 as a double)", () =>
    refused(raw(body().replace('"__X__"', "1e300")), 400, "invalid_request", "metadata.note"));
  it("a non-zero number below the smallest double (it would read as 0): the answer says where", async () => {
    const r = await refused(raw(body().replace('"__X__"', "-1e-400")), 400, "invalid_request", "body");
    expect(r.body.detail).toMatch(/-1e-400 at line 1, column \d+ reads as 0/);
    await refused(raw(body().replace('"__X__"', `0.${"0".repeat(330)}1`)), 400, "invalid_request", "body");
    await refused(raw(body().replace('"__X__"', `0.${"0".repeat(250)}1e-80`)), 400, "invalid_request", "body"); // neither part alone would be
    await refused(raw(body().replace('"__X__"', "1E-0000400")), 400, "invalid_request", "body");
  });
  it("numbers that keep their value are stored as sent, a string that looks like a tiny number too", async () => {
    const note = { big: 9007199254740991, small: -9007199254740991, tiny: 5e-324, fraction: 0.1, zero: 0, negzero: -0.0, exp: 1.5e-300, text: "1e-400" };
    const text = body().replace('"__X__"', JSON.stringify(note).replace('"negzero":0', '"negzero":-0.0').replace('"zero":0', '"zero":0e-999'));
    const r = expectStatus(await raw(text)(), 201);
    expect(r.body.metadata.note).toEqual({ ...note, negzero: 0 });
  });
  it("a __proto__ key", () => refused(raw(body().replace('"note"', '"__proto__"').replace('"__X__"', '{"x":1}')), 400, "invalid_request", "__proto__"));
  it("bytes that are not UTF-8", async () => {
    const before = await writeCounts(api.db);
    const bytes = Buffer.concat([Buffer.from(body().split("__X__")[0]!), Buffer.from([0xff, 0xfe]), Buffer.from(body().split("__X__")[1]!)]);
    const res = await api.app.request("/v1/transfers", {
      method: "POST",
      body: bytes,
      headers: { authorization: `Bearer ${w.keys.m1}`, "content-type": "application/json", "idempotency-key": "utf8" },
    });
    expect(res.status).toBe(400);
    expect(await writeCounts(api.db)).toEqual(before);
  });
  it("a compressed body", () => refused(raw(body(), { "content-encoding": "gzip" }), 415, "unsupported_media_type"));
  it("an owner id without its type, or with a trailing space", async () => {
    await refused(
      () => api.call("POST", "/v1/accounts", { key: w.keys.m1, body: { asset_id: w.asset.id, code: "x", normal_side: "credit", owner_id: "o1" } }),
      400,
      "invalid_request",
      "owner_id",
    );
    await refused(
      () =>
        api.call("POST", "/v1/accounts", {
          key: w.keys.m1,
          body: { asset_id: w.asset.id, code: "x", normal_side: "credit", owner_type: "operator", owner_id: "o1 " },
        }),
      400,
      "invalid_request",
      "owner_id",
    );
  });
  it("field paths keep the casing that was sent", async () => {
    const res = await refused(transfer({ ...leg("1"), fooBar: 1 }), 400, "invalid_request", "fooBar");
    expect(res.body.detail).toContain("fooBar");
    const asset = await refused(
      () => api.call("POST", "/v1/assets", { body: { code: "X", scale: 2, settlement: { kind: "erc20", chain_id: 1, token_address: "0x12" } } }),
      400,
      "invalid_request",
      "settlement.token_address",
    );
    expect(asset.body.detail).toContain("settlement.token_address");
  });
  it("limits out of range, written oddly, or absurd", async () => {
    for (const limit of ["0", "1001", "-1", "1e2", "99999999999999999999999"]) {
      const res = await refused(() => api.call("GET", `/v1/accounts/${w.m1Customer.id}/entries?limit=${limit}`), 400, "invalid_request", "limit");
      expect(res.body.errors).toHaveLength(1);
      expect(res.body.detail).toMatch(/1 to 1000/);
    }
  });
  it("an asset cursor this API never returned", () => refused(() => api.call("GET", "/v1/assets?cursor=zzz"), 400, "invalid_request", "cursor"));
});

describe("which check answers first", () => {
  it("405 for a method the route does not take, 404 for an unknown route and 401 without a key, whatever the content type", async () => {
    expect((await api.call("DELETE", `/v1/accounts/${w.m1Customer.id}`, { raw: "x", headers: { "content-type": "text/plain" } })).status).toBe(405);
    expect((await api.call("DELETE", `/v1/no-such-route/${w.m1Customer.id}`, { raw: "x", headers: { "content-type": "text/plain" } })).status).toBe(404);
    expect((await api.call("POST", "/healthz", { key: null, raw: "x", headers: { "content-type": "text/plain" } })).status).toBe(405);
    expect((await api.call("POST", "/v1/transfers", { key: null, raw: "x", headers: { "content-type": "text/plain" } })).status).toBe(401);
  });
  it("403 for a wrong role before the body is looked at", async () => {
    const res = await api.call("POST", "/v1/transfers", { key: w.keys.o1, raw: "x", headers: { "content-type": "text/plain" } });
    expect(res.status).toBe(403);
  });
  it("a POST with an optional body may come with no body and no content type", async () => {
    const hold = expectStatus(await api.call("POST", "/v1/transfers", { key: w.keys.m1, body: { type: "pending", ...leg("1") } }), 201).body;
    const res = await api.app.request(`/v1/transfers/${hold.id}/void`, {
      method: "POST",
      headers: { authorization: `Bearer ${w.keys.m1}`, "idempotency-key": "void-no-body", "content-length": "0" },
    });
    expect(res.status).toBe(201);
  });
  it("the bearer scheme in any case", async () => {
    const res = await api.app.request("/v1/assets", { headers: { authorization: `bearer ${w.keys.m1}` } });
    expect(res.status).toBe(200);
  });
});
