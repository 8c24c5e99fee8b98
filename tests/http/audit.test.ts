import { describe, expect, it } from "vitest";
import { expectStatus, worldPerFile } from "../support/http.js";

/** The audit log cannot be spoofed and has no gaps where a refusal happens, within a bound. */
const t = worldPerFile();

const rows = async (where: string, params: unknown[] = []) =>
  t.api.db.query<{ request_id: string; client_request_id: string | null; status: number; method: string; path: string; key_id: string | null }>(
    `select request_id, client_request_id, status, method, path, key_id from audit_log where ${where} order by id`,
    params,
  );

describe("the audit log", () => {
  it("request ids are the service's: two requests that send one X-Request-Id get two ids, the client's is kept beside them", async () => {
    const headers = { "x-request-id": "same-id-twice" };
    const a = expectStatus(await t.api.call("POST", "/v1/customers", { key: t.w.keys.m1, body: { id: "audit-a", billing: "prepaid" }, headers }), 201);
    const b = expectStatus(await t.api.call("POST", "/v1/customers", { key: t.w.keys.m1, body: { id: "audit-b", billing: "prepaid" }, headers }), 201);
    expect(a.headers.get("x-request-id")).not.toBe("same-id-twice");
    expect(a.headers.get("x-request-id")).not.toBe(b.headers.get("x-request-id"));
    const logged = await rows("client_request_id = 'same-id-twice'");
    expect(logged.map((r) => r.request_id).sort()).toEqual([a.headers.get("x-request-id"), b.headers.get("x-request-id")].sort());
    // Nobody can pass its id off as another request's: a client id equal to a service id is only the client's.
    const c = await t.api.call("POST", "/v1/customers", {
      key: t.w.keys.m1,
      body: { id: "audit-c", billing: "prepaid" },
      headers: { "x-request-id": a.headers.get("x-request-id")! },
    });
    expect((await rows("request_id = $1", [a.headers.get("x-request-id")])).length).toBe(1);
    expect(c.headers.get("x-request-id")).not.toBe(a.headers.get("x-request-id"));
    // A client id that is not printable ASCII (or too long) is not kept.
    const odd = await t.api.call("POST", "/v1/customers", {
      key: t.w.keys.m1,
      body: { id: "audit-d", billing: "prepaid" },
      headers: { "x-request-id": "x".repeat(101) },
    });
    expect((await rows("request_id = $1", [odd.headers.get("x-request-id")]))[0]).toMatchObject({ client_request_id: null });
    const listed = expectStatus(await t.api.call("GET", "/v1/audit/log?limit=1000", { key: t.w.keys.finance }), 200).body.data;
    expect(listed.filter((e: { client_request_id: string | null }) => e.client_request_id === "same-id-twice")).toHaveLength(2);
  });

  it("refused requests are audited: an oversized body (413), no key or a bad one (401), a role that may not (403), of any method", async () => {
    const big = await t.api.call("POST", "/v1/customers", {
      key: t.w.keys.m1,
      raw: JSON.stringify({ id: "big", billing: "prepaid", metadata: { x: "x".repeat(1_100_000) } }),
      headers: { "x-request-id": "too-big" },
    });
    expect(big.status).toBe(413);
    expect(await rows("client_request_id = 'too-big'")).toEqual([expect.objectContaining({ status: 413, method: "POST", path: "/v1/customers" })]);
    const anonymous = await t.api.call("GET", "/v1/payouts", { key: null, headers: { "x-request-id": "no-key" } });
    expect(anonymous.status).toBe(401);
    expect(await rows("client_request_id = 'no-key'")).toEqual([expect.objectContaining({ status: 401, method: "GET", key_id: null })]);
    const forbidden = await t.api.call("GET", "/v1/audit/log", { key: t.w.keys.o1, headers: { "x-request-id": "not-allowed" } });
    expect(forbidden.status).toBe(403);
    expect(await rows("client_request_id = 'not-allowed'")).toEqual([expect.objectContaining({ status: 403, method: "GET", key_id: expect.any(String) })]);
    // A GET that is answered is not audited.
    expectStatus(await t.api.call("GET", "/v1/payouts", { key: t.w.keys.finance, headers: { "x-request-id": "plain-read" } }), 200);
    expect(await rows("client_request_id = 'plain-read'")).toEqual([]);
  });

  it("a flood of refused requests is audited up to a bound a minute, and what is left out is counted", async () => {
    const before = (await rows("status = 401 and key_id is null")).length;
    const started = Date.now();
    for (let i = 0; i < 150; i++) await t.api.call("GET", "/v1/assets", { key: "lk_0000000000000000_" + "B".repeat(43) });
    // The budget is 60 rows a minute for one source: the flood may span two minutes of the clock.
    const minutes = Math.floor(Date.now() / 60_000) - Math.floor(started / 60_000) + 1;
    const written = (await rows("status = 401 and key_id is null")).length - before;
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThanOrEqual(60 * minutes);
    expect(written).toBeLessThan(150);
    const metrics = (await t.api.call("GET", "/metrics", { key: null })).body as string;
    expect(Number(/audit_refused_dropped_total (\d+)/.exec(metrics)?.[1] ?? "0")).toBeGreaterThanOrEqual(150 - written);
  });

  it("the list filters by key and period and pages by cursor, oldest first, without gaps or repeats", async () => {
    for (const id of ["audit-page-1", "audit-page-2", "audit-page-3"]) {
      expectStatus(await t.api.call("POST", "/v1/customers", { key: t.w.keys.m1, body: { id, billing: "prepaid" }, headers: { "x-request-id": id } }), 201);
    }
    const mine = await rows("client_request_id like 'audit-page-%'");
    const keyId = mine[0]!.key_id!;
    const everything = expectStatus(await t.api.call("GET", `/v1/audit/log?key_id=${keyId}&limit=1000`, { key: t.w.keys.finance }), 200).body.data;
    expect(everything.length).toBeGreaterThanOrEqual(3);
    expect(everything.every((e: { key_id: string }) => e.key_id === keyId)).toBe(true);
    const paged: { id: string }[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 100; i++) {
      const page: { data: { id: string }[]; next_cursor: string | null } = expectStatus(
        await t.api.call("GET", `/v1/audit/log?key_id=${keyId}&limit=2${cursor ? `&cursor=${cursor}` : ""}`, { key: t.w.keys.finance }),
        200,
      ).body;
      paged.push(...page.data);
      cursor = page.next_cursor;
      if (!cursor) break;
    }
    expect(paged.map((e) => e.id)).toEqual(everything.map((e: { id: string }) => e.id));
    expect([...paged.map((e) => BigInt(e.id))].sort((a, b) => (a < b ? -1 : 1))).toEqual(paged.map((e) => BigInt(e.id)));
    const last = everything[everything.length - 1] as { at: string };
    const after = expectStatus(
      await t.api.call("GET", `/v1/audit/log?key_id=${keyId}&from=${encodeURIComponent(new Date(Date.parse(last.at) + 1).toISOString())}`, {
        key: t.w.keys.finance,
      }),
      200,
    ).body.data;
    expect(after).toEqual([]);
    const upTo = expectStatus(
      await t.api.call("GET", `/v1/audit/log?key_id=${keyId}&limit=1000&to=${encodeURIComponent(last.at)}`, { key: t.w.keys.finance }),
      200,
    ).body.data;
    expect(upTo.length).toBe(everything.filter((e: { at: string }) => e.at < last.at).length);
    expect(expectStatus(await t.api.call("GET", "/v1/audit/log?key_id=nobody", { key: t.w.keys.finance }), 200).body.data).toEqual([]);
    expect((await t.api.call("GET", "/v1/audit/log?cursor=abc", { key: t.w.keys.finance })).status).toBe(400);
    // A period that ends before it starts is a mistake to name, not an empty page.
    const backwards = await t.api.call("GET", `/v1/audit/log?from=${encodeURIComponent(last.at)}&to=${encodeURIComponent(everything[0].at)}`, {
      key: t.w.keys.finance,
    });
    expect(backwards.status).toBe(400);
    expect(JSON.stringify(backwards.body)).toContain("from must be before to");
  });
  it("a write commits with its audit row and its remembered answer, in one transaction: they do not depend on the audit log's own writer", async () => {
    const { audit } = t.api.ledger;
    const submit = audit.submit.bind(audit);
    // The writer of calls that change nothing fails from now on: writes must not need it.
    audit.submit = () => Promise.reject(new Error("audit writer down"));
    try {
      const calls = [
        { path: "/v1/usage", key: t.w.keys.m1, body: t.w.usage("audit-tx-usage"), status: 201 },
        {
          path: "/v1/transfers",
          key: t.w.keys.m1,
          body: { legs: [{ debit_account_id: t.w.m1Funding.id, credit_account_id: t.w.m1Customer.id, amount: "5" }] },
          status: 201,
        },
        { path: "/v1/customers", key: t.w.keys.m1, body: { id: "audit-tx-customer", billing: "prepaid" }, status: 201 },
        { path: "/v1/usage/batch", key: t.w.keys.m1, body: { records: [t.w.usage("audit-tx-batch")] }, status: 200 },
      ];
      const answered = [];
      for (const call of calls) {
        const key = `audit-tx-${call.path}`;
        const res = expectStatus(await t.api.call("POST", call.path, { key: call.key, body: call.body, idempotencyKey: key }), call.status);
        const requestId = res.headers.get("x-request-id");
        expect(await rows("request_id = $1", [requestId])).toEqual([expect.objectContaining({ status: call.status, method: "POST", path: call.path })]);
        answered.push({ ...call, idempotencyKey: key, res });
      }
      // A PUT without a key (optional there): its change and audit row in one transaction too, nothing remembered.
      const put = expectStatus(
        await t.api.call("PUT", "/v1/marketplaces/m1/usage-limits/USDC", { key: t.w.keys.admin, body: { max_gross_per_record: "1000000000" } }),
        202,
      );
      expect(await rows("request_id = $1", [put.headers.get("x-request-id")])).toEqual([expect.objectContaining({ status: 202, method: "PUT" })]);
      // A call that changes nothing is audited by the audit log's own writer: without it, no answer.
      const refused = await t.api.call("POST", "/v1/usage", { key: t.w.keys.m1, body: t.w.usage("audit-tx-refused", { customer_id: "nobody" }) });
      expect(refused.status).toBe(503);
      audit.submit = submit;
      // The answers were remembered for their keys: a retry replays each, as it was.
      for (const call of answered) {
        const again = await t.api.call("POST", call.path, { key: call.key, body: call.body, idempotencyKey: call.idempotencyKey });
        expect([call.path, again.status]).toEqual([call.path, call.status]);
        expect(again.headers.get("idempotent-replayed")).toBe("true");
        expect(again.body).toEqual(call.res.body);
      }
    } finally {
      audit.submit = submit;
    }
    // Each change has exactly one row: none was written twice (in its transaction and after it).
    const [dup] = await t.api.db.query<{ n: string }>(
      "select count(*)::text as n from (select request_id from audit_log group by request_id having count(*) > 1) d",
    );
    expect(dup!.n).toBe("0");
  });
});
