import { describe, expect, it } from "vitest";
import { expectStatus, worldPerFile } from "../support/http.js";

/**
 * After a key is revoked, what it left behind can be found (docs/api.md, "Keys and roles"): the
 * keys it created (`created_by` on every key, `GET /v1/api-keys?created_by=`) and the payouts it
 * asked for (`requested_by` on every payout, `GET /v1/payouts?requested_by=`).
 */
const t = worldPerFile();

type Key = { id: string; secret: string; created_by: string | null };
const newKey = async (body: Record<string, unknown>, key?: string) => expectStatus(await t.api.call("POST", "/v1/api-keys", { key, body }), 201).body as Key;
const listKeys = async (query: string, key?: string) => {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page++) {
    const res = expectStatus(await t.api.call("GET", `/v1/api-keys?limit=100${query}${cursor ? `&cursor=${cursor}` : ""}`, { key }), 200).body;
    ids.push(...res.data.map((k: { id: string }) => k.id));
    if (!res.next_cursor) return { ids, data: res.data };
    cursor = res.next_cursor;
  }
  throw new Error("more than 50 pages of keys");
};

describe("the keys a key created", () => {
  it("every key names the key that created it; the bootstrap admin's are 'bootstrap-admin'", async () => {
    const admin = await newKey({ name: "a person's admin key", role: "admin" });
    expect(admin.created_by).toBe("bootstrap-admin");
    const finance = await newKey({ name: "made by the person", role: "finance" }, admin.secret);
    const market = await newKey({ name: "made by the person too", role: "marketplace", scope_id: "m1" }, admin.secret);
    expect(finance.created_by).toBe(admin.id);
    const listed = expectStatus(await t.api.call("GET", `/v1/api-keys?created_by=${admin.id}`), 200).body;
    expect(listed.data.map((k: Key) => k.id).sort()).toEqual([finance.id, market.id].sort());
    expect(listed.data.every((k: Key) => k.created_by === admin.id)).toBe(true);
    // No secret or hash in a listing.
    expect(JSON.stringify(listed)).not.toContain(finance.secret);
    expect(JSON.stringify(listed)).not.toMatch(/secret/);
    // The id is matched whatever its case; the bootstrap admin's keys include the person's admin key.
    expect((await listKeys(`&created_by=${admin.id.toUpperCase()}`)).ids.sort()).toEqual([finance.id, market.id].sort());
    const byBootstrap = await listKeys("&created_by=bootstrap-admin");
    expect(byBootstrap.ids).toContain(admin.id);
    expect(byBootstrap.ids).not.toContain(finance.id);
  });

  it("revoking a key leaves what it created valid; the listing finds it, and revoking it ends it", async () => {
    const admin = await newKey({ name: "to be revoked", role: "admin" });
    const made = await newKey({ name: "made before the revocation", role: "finance" }, admin.secret);
    expectStatus(await t.api.call("POST", `/v1/api-keys/${admin.id}/revoke`), 200);
    expectStatus(await t.api.call("GET", "/v1/payouts?limit=1", { key: made.secret }), 200);
    const left = await listKeys(`&created_by=${admin.id}`);
    expect(left.ids).toEqual([made.id]);
    expect(left.data[0].revoked_at).toBeNull();
    expectStatus(await t.api.call("POST", `/v1/api-keys/${made.id}/revoke`), 200);
    expect((await t.api.call("GET", "/v1/payouts?limit=1", { key: made.secret })).status).toBe(401);
  });

  it("a key that created nothing, or an id that is no key's, lists nothing; only admins list keys", async () => {
    expect(expectStatus(await t.api.call("GET", "/v1/api-keys?created_by=01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e"), 200).body.data).toEqual([]);
    for (const key of [t.w.keys.finance, t.w.keys.m1, t.w.keys.o1])
      expect((await t.api.call("GET", `/v1/api-keys?created_by=bootstrap-admin`, { key })).status).toBe(403);
  });

  it.each([
    ["created_by=scheduler", "created_by"],
    ["created_by=1", "created_by"],
    ["created_by=", "created_by"],
    ["created_by=bootstrap-admin%00", "created_by"],
    ["created_by=bootstrap-admin&created_by=bootstrap-admin", "created_by"],
    ["created=bootstrap-admin", "created"],
  ])("?%s is refused, naming %s", async (query, field) => {
    const res = await t.api.call("GET", `/v1/api-keys?${query}`);
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/application\/problem\+json/);
    expect(JSON.stringify(res.body)).toContain(field);
  });
});

describe("the payouts a key asked for", () => {
  it("every payout names the key that asked for it; the listing filters by it, within what the caller may see", async () => {
    const finance = await newKey({ name: "asks for a payout", role: "finance" });
    const byFinance = expectStatus(
      await t.api.call("POST", "/v1/payouts", { key: finance.secret, body: { operator_id: "o1", asset: "USDC", amount: "100000" } }),
      201,
    ).body;
    expect(byFinance.requested_by).toBe(finance.id);
    const byOperator = expectStatus(await t.api.call("POST", "/v1/payouts", { key: t.w.keys.o1, body: { asset: "USDC", amount: "100000" } }), 201).body;
    expect(byOperator.requested_by).not.toBe(finance.id);
    expect(expectStatus(await t.api.call("GET", `/v1/payouts/${byFinance.id}`), 200).body.requested_by).toBe(finance.id);

    const listed = expectStatus(await t.api.call("GET", `/v1/payouts?requested_by=${finance.id}`, { key: t.w.keys.finance }), 200).body;
    expect(listed.data.map((p: { id: string }) => p.id)).toEqual([byFinance.id]);
    const pending = expectStatus(await t.api.call("GET", `/v1/payouts?requested_by=${finance.id}&status=pending`), 200).body;
    expect(pending.data.map((p: { id: string }) => p.id)).toEqual([byFinance.id]);
    // An operator's key sees its own operator's payouts only, whatever the filter names.
    expect(expectStatus(await t.api.call("GET", `/v1/payouts?requested_by=${finance.id}`, { key: t.w.keys.o2 }), 200).body.data).toEqual([]);
    expect(
      expectStatus(await t.api.call("GET", `/v1/payouts?requested_by=${finance.id}`, { key: t.w.keys.o1 }), 200).body.data.map((p: { id: string }) => p.id),
    ).toEqual([byFinance.id]);
    // What a revoked key asked for and is not yet paid can be found and cancelled.
    expectStatus(await t.api.call("POST", `/v1/api-keys/${finance.id}/revoke`), 200);
    expectStatus(await t.api.call("POST", `/v1/payouts/${byFinance.id}/cancel`, { key: t.w.keys.finance }), 200);
    expect(expectStatus(await t.api.call("GET", `/v1/payouts?requested_by=${finance.id}&status=pending`), 200).body.data).toEqual([]);
  });

  it.each([["requested_by=nobody"], ["requested_by=0x12"], ["requested_by=scheduler%00"]])("?%s is refused, naming requested_by", async (query) => {
    const res = await t.api.call("GET", `/v1/payouts?${query}`, { key: t.w.keys.finance });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain("requested_by");
  });

  it("the schedule's payouts are listed as 'scheduler'", async () => {
    expect(expectStatus(await t.api.call("GET", "/v1/payouts?requested_by=scheduler", { key: t.w.keys.finance }), 200).body.data).toEqual([]);
  });
});
