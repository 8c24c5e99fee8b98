import { beforeAll, describe, expect, it } from "vitest";
import { relayAllEvents } from "../../src/services/events.js";
import { expectStatus, worldPerFile, writeJournal, type CallOptions, type WriteJournal } from "../support/http.js";

/**
 * Routes that take no body (POSTs that act on a resource, and DELETEs) refuse one they do not take
 * (src/http/routes/common.ts, NoBody): an unknown field, an array, a string or malformed JSON is a
 * 400 and nothing is written. Before, the body was ignored and the action carried out:
 * `{"amount":"5"}` on a hold's close closed the whole hold. No body, or `{}`, still acts.
 */
const t = worldPerFile();
let j: WriteJournal;
beforeAll(async () => {
  j = await writeJournal(t.api.db, ["audit_log INSERT"]);
});
let n = 0;
type Key = "admin" | "m1" | "o1";
const targets: Array<{ name: string; method: "POST" | "DELETE"; as: Key; make: () => Promise<string> }> = [
  {
    name: "POST /v1/holds/{id}/close",
    method: "POST",
    as: "m1",
    make: async () =>
      `/v1/holds/${expectStatus(await t.api.call("POST", "/v1/holds", { key: t.w.keys.m1, body: { customer_id: "c1", asset: "USDC", amount: "10" } }), 201).body.id}/close`,
  },
  {
    name: "POST /v1/payouts/{id}/cancel",
    method: "POST",
    as: "o1",
    make: async () =>
      `/v1/payouts/${expectStatus(await t.api.call("POST", "/v1/payouts", { key: t.w.keys.o1, body: { asset: "USDC", amount: "1" } }), 201).body.id}/cancel`,
  },
  {
    name: "POST /v1/api-keys/{id}/revoke",
    method: "POST",
    as: "admin",
    make: async () => `/v1/api-keys/${expectStatus(await t.api.call("POST", "/v1/api-keys", { body: { name: "x", role: "finance" } }), 201).body.id}/revoke`,
  },
  {
    name: "POST /v1/customers/{id}/retire",
    method: "POST",
    as: "m1",
    make: async () => {
      const id = `bl-${++n}`;
      expectStatus(await t.api.call("POST", "/v1/customers", { key: t.w.keys.m1, body: { id, billing: "prepaid" } }), 201);
      return `/v1/customers/${id}/retire`;
    },
  },
  {
    name: "POST /v1/assets/{code}/retire",
    method: "POST",
    as: "admin",
    make: async () => {
      const code = `BL${++n}`;
      expectStatus(await t.api.call("POST", "/v1/assets", { body: { code, scale: 6, settlement: { kind: "offchain" } } }), 201);
      return `/v1/assets/${code}/retire`;
    },
  },
  {
    name: "POST /v1/operators/{id}/invitations/{marketplace_id}/accept",
    method: "POST",
    as: "o1",
    make: async () => {
      const m = `bl-m${++n}`;
      expectStatus(await t.api.call("POST", "/v1/marketplaces", { body: { id: m, name: m } }), 201);
      const key = expectStatus(await t.api.call("POST", "/v1/api-keys", { body: { name: m, role: "marketplace", scope_id: m } }), 201).body.secret;
      expectStatus(await t.api.call("POST", "/v1/operators", { key, body: { id: "o1", name: "operator o1" } }), 202);
      return `/v1/operators/o1/invitations/${m}/accept`;
    },
  },
  {
    name: "POST /v1/webhook-endpoints/{id}/deliveries/{target}/redeliver",
    method: "POST",
    as: "m1",
    make: async () => {
      await relayAllEvents(t.api.db);
      const [ev] = await t.api.db.query<{ id: string }>("select id from events where marketplace_id = 'm1' order by position limit 1");
      const ep = expectStatus(await t.api.call("POST", "/v1/webhook-endpoints", { key: t.w.keys.m1, body: { url: "http://127.0.0.1:9/x" } }), 201).body.id;
      return `/v1/webhook-endpoints/${ep}/deliveries/${ev!.id}/redeliver`;
    },
  },
  {
    name: "DELETE /v1/balance-monitors/{id}",
    method: "DELETE",
    as: "m1",
    make: async () =>
      `/v1/balance-monitors/${expectStatus(await t.api.call("POST", "/v1/balance-monitors", { key: t.w.keys.m1, body: { account_id: t.w.m1Customer.id, direction: "below", threshold: "1" } }), 201).body.id}`,
  },
  {
    name: "DELETE /v1/webhook-endpoints/{id}",
    method: "DELETE",
    as: "m1",
    make: async () =>
      `/v1/webhook-endpoints/${expectStatus(await t.api.call("POST", "/v1/webhook-endpoints", { key: t.w.keys.m1, body: { url: "http://127.0.0.1:9/x" } }), 201).body.id}`,
  },
];

const bodies: Array<[string, CallOptions, number, string, string?]> = [
  ['an unknown field {"amount":"5"}', { body: { amount: "5" } }, 400, "invalid_request", "amount"],
  ["an array", { body: [1, 2] }, 400, "invalid_request"],
  ["a JSON string", { body: "close it" }, 400, "invalid_request"],
  ["malformed JSON", { raw: '{"a":' }, 400, "malformed_json"],
];

describe("routes without a body refuse a body they do not take, and write nothing", () => {
  for (const target of targets) {
    for (const [label, send, status, code, field] of bodies) {
      if (target.method === "POST" && code === "malformed_json") continue; // already refused by jsonBodyGuard
      it(`${target.name}: ${label}`, async () => {
        const path = await target.make();
        const mark = await j.mark();
        const res = await t.api.call(target.method, path, { key: t.w.keys[target.as], ...send });
        expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(status);
        expect(res.body.code).toBe(code);
        if (field) expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(field);
        expect(await j.since(mark)).toEqual([]);
      });
    }
  }
});

describe("routes without a body act on no body, or on {}", () => {
  for (const target of targets) {
    for (const [label, send] of [
      ["no body", {}],
      ["{}", { body: {} }],
    ] as const) {
      it(`${target.name}: ${label}`, async () => {
        const path = await target.make();
        const mark = await j.mark();
        const res = await t.api.call(target.method, path, { key: t.w.keys[target.as], ...send });
        expect([200, 202], JSON.stringify(res.body).slice(0, 300)).toContain(res.status);
        expect((await j.since(mark)).length).toBeGreaterThan(0);
      });
    }
  }
});
