import { describe, expect, it } from "vitest";
import type { Queryable } from "../../src/db/client.js";
import { expectRefused, expectStatus, testApi, worldPerFile } from "../support/http.js";

/**
 * The usage batch log (docs/usage.md, "Batch log"): every 2xx batch answer leaves one log with its
 * counts and its refused records' reasons, in the transaction of its records; a retry with the same
 * Idempotency-Key writes no second log; a whole-request refusal writes none; a marketplace sees its
 * own batches only.
 */
const t = worldPerFile();
const count = async (table: string) => Number((await t.api.db.query<{ n: string }>(`select count(*)::text as n from ${table}`))[0]!.n);

describe("the usage batch log", () => {
  it("keeps the counts, the totals and each refused record's code, reason and field; the answer names the batch", async () => {
    const records = [
      t.w.usage("log-ok-1"),
      { ...t.w.usage("log-bad-qty"), quantity: "-1" },
      t.w.usage("log-ok-2"),
      t.w.usage("log-bad-op", { operator_id: "nobody" }),
      "not a record",
    ];
    const res = expectStatus(await t.api.call("POST", "/v1/usage/batch", { key: t.w.keys.m1, body: { records }, idempotencyKey: "log-batch-1" }), 200).body;
    expect(res.summary).toEqual({ accepted: 2, duplicate: 0, rejected: 3 });
    expect(res.batch_id).toMatch(/^ub_[0-9a-f-]{36}$/);
    const batch = expectStatus(await t.api.call("GET", `/v1/usage-batches/${res.batch_id}`, { key: t.w.keys.m1 }), 200).body;
    expect(batch).toMatchObject({ id: res.batch_id, marketplace_id: "m1", idempotency_key: "log-batch-1", records: 5, accepted: 2, duplicate: 0, rejected: 3 });
    expect(batch.totals).toEqual([{ asset: "USDC", records: 2, gross: "4996800", gross_display: "4.9968" }]);
    expect(batch.rejections.data.map((r: { index: number; external_id: string | null; code: string }) => [r.index, r.external_id, r.code])).toEqual([
      [1, "log-bad-qty", res.results[1].code],
      [3, "log-bad-op", res.results[3].code],
      [4, null, "invalid_request"],
    ]);
    expect(batch.rejections.data[0].field).toBe("quantity");
    expect(batch.rejections.data[1].reason).toContain("nobody");
    expect(batch.rejections.next_cursor).toBeNull();
    // A page of one rejection at a time.
    const page = expectStatus(await t.api.call("GET", `/v1/usage-batches/${res.batch_id}?limit=1&cursor=1`, { key: t.w.keys.finance }), 200).body;
    expect(page.rejections.data.map((r: { index: number }) => r.index)).toEqual([3]);
    expect(page.rejections.next_cursor).toBe("3");
  });

  it("a retry with the same Idempotency-Key writes no second log and answers the same batch id", async () => {
    const body = { records: [t.w.usage("log-retry-1"), { ...t.w.usage("log-retry-bad"), asset: "NOPE" }] };
    const first = expectStatus(await t.api.call("POST", "/v1/usage/batch", { key: t.w.keys.m1, body, idempotencyKey: "log-retry" }), 200).body;
    const [batches, rejections] = [await count("usage_batches"), await count("usage_batch_rejections")];
    const again = expectStatus(await t.api.call("POST", "/v1/usage/batch", { key: t.w.keys.m1, body, idempotencyKey: "log-retry" }), 200).body;
    expect(again.batch_id).toBe(first.batch_id);
    expect(again.summary).toEqual({ accepted: 0, duplicate: 1, rejected: 1 });
    expect([await count("usage_batches"), await count("usage_batch_rejections")]).toEqual([batches, rejections]);
    // A batch without refusals is remembered: its retry is the same answer.
    const clean = { records: [t.w.usage("log-clean-1")] };
    const a = expectStatus(await t.api.call("POST", "/v1/usage/batch", { key: t.w.keys.m1, body: clean, idempotencyKey: "log-clean" }), 200);
    const b = expectStatus(await t.api.call("POST", "/v1/usage/batch", { key: t.w.keys.m1, body: clean, idempotencyKey: "log-clean" }), 200);
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    expect(b.body.batch_id).toBe(a.body.batch_id);
    expect(await count("usage_batches")).toBe(batches + 1);
  });

  it("Idempotency-Keys are the tenant's: an admin's batch for m1 and m1's own under the same key are two logs, each retry answers its own", async () => {
    const post = (key: string, body: Record<string, unknown>) => t.api.call("POST", "/v1/usage/batch", { key, body, idempotencyKey: "nightly-2026-10-15" });
    // Each with a refused record: not remembered, so a retry runs again and finds its log.
    const adminBody = { marketplace_id: "m1", records: [t.w.usage("tenant-admin-1"), t.w.usage("tenant-admin-bad", { quantity: "0" })] };
    const m1Body = { records: [t.w.usage("tenant-m1-1"), t.w.usage("tenant-m1-2"), t.w.usage("tenant-m1-bad", { quantity: "0" })] };
    const admin = expectStatus(await post(t.w.keys.admin, adminBody), 200).body;
    const mine = expectStatus(await post(t.w.keys.m1, m1Body), 200).body;
    expect(mine.summary).toEqual({ accepted: 2, duplicate: 0, rejected: 1 });
    expect(mine.batch_id).not.toBe(admin.batch_id);
    const log = expectStatus(await t.api.call("GET", `/v1/usage-batches/${mine.batch_id}`, { key: t.w.keys.m1 }), 200).body;
    expect(log).toMatchObject({ marketplace_id: "m1", idempotency_key: "nightly-2026-10-15", records: 3, accepted: 2, rejected: 1 });
    expect(log.rejections.data.map((r: { external_id: string }) => r.external_id)).toEqual(["tenant-m1-bad"]);
    const adminLog = expectStatus(await t.api.call("GET", `/v1/usage-batches/${admin.batch_id}`, { key: t.w.keys.finance }), 200).body;
    expect(adminLog).toMatchObject({ marketplace_id: "m1", idempotency_key: "nightly-2026-10-15", records: 2, accepted: 1, rejected: 1 });
    const batches = await count("usage_batches");
    expect(expectStatus(await post(t.w.keys.m1, m1Body), 200).body.batch_id).toBe(mine.batch_id);
    expect(expectStatus(await post(t.w.keys.admin, adminBody), 200).body.batch_id).toBe(admin.batch_id);
    expect(await count("usage_batches")).toBe(batches);
  });

  it("a batch whose every record is refused is logged (atomic too); a whole-request refusal writes nothing", async () => {
    const res = expectStatus(
      await t.api.call("POST", "/v1/usage/batch", { key: t.w.keys.m1, body: { records: [t.w.usage("log-none-1", { customer_id: "nobody" }), 42] } }),
      200,
    ).body;
    const batch = expectStatus(await t.api.call("GET", `/v1/usage-batches/${res.batch_id}`, { key: t.w.keys.m1 }), 200).body;
    expect(batch).toMatchObject({ records: 2, accepted: 0, rejected: 2, totals: [] });
    expect(batch.rejections.data).toHaveLength(2);
    const atomic = expectStatus(
      await t.api.call("POST", "/v1/usage/batch", {
        key: t.w.keys.m1,
        body: { atomic: true, records: [t.w.usage("log-atomic-ok"), t.w.usage("log-atomic-bad", { asset: "NOPE" })] },
      }),
      200,
    ).body;
    const logged = expectStatus(await t.api.call("GET", `/v1/usage-batches/${atomic.batch_id}`, { key: t.w.keys.m1 }), 200).body;
    expect(logged.rejections.data.map((r: { code: string }) => r.code)).toEqual(["atomic_batch_aborted", atomic.results[1].code]);
    await expectRefused(t.api, () => t.api.call("POST", "/v1/usage/batch", { key: t.w.keys.m1, raw: "{not json" }), 400, "malformed_json");
    await expectRefused(t.api, () => t.api.call("POST", "/v1/usage/batch", { key: t.w.keys.m1, body: { records: [] } }), 400, "invalid_request", "records");
    await expectRefused(
      t.api,
      () => t.api.call("POST", "/v1/usage/batch", { key: t.w.keys.m1, body: { records: [t.w.usage("x")] }, idempotencyKey: null }),
      400,
      "idempotency_key_required",
    );
  });

  it("a marketplace sees its own batches only; finance sees all and filters; an operator is refused", async () => {
    const m2 = expectStatus(
      await t.api.call("POST", "/v1/usage/batch", { key: t.w.keys.m2, body: { records: [t.w.usage("log-m2-bad", { customer_id: "nobody" })] } }),
      200,
    ).body;
    const mine = expectStatus(await t.api.call("GET", "/v1/usage-batches", { key: t.w.keys.m1 }), 200).body.data;
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((b: { marketplace_id: string }) => b.marketplace_id === "m1")).toBe(true);
    expect(expectStatus(await t.api.call("GET", "/v1/usage-batches?marketplace_id=m2", { key: t.w.keys.m1 }), 200).body.data).toEqual([]);
    await expectRefused(t.api, () => t.api.call("GET", `/v1/usage-batches/${m2.batch_id}`, { key: t.w.keys.m1 }), 404, "usage_batch_not_found");
    await expectRefused(t.api, () => t.api.call("GET", `/v1/usage-batches/${m2.batch_id}`, { key: t.w.keys.o1 }), 403, "forbidden");
    const all = expectStatus(await t.api.call("GET", "/v1/usage-batches?marketplace_id=m2&has_rejections=true", { key: t.w.keys.finance }), 200).body.data;
    expect(all.map((b: { id: string }) => b.id)).toEqual([m2.batch_id]);
    const clean = expectStatus(await t.api.call("GET", "/v1/usage-batches?has_rejections=false", { key: t.w.keys.finance }), 200).body.data;
    expect(clean.every((b: { rejected: number }) => b.rejected === 0)).toBe(true);
    // Newest first, a page at a time.
    const one = expectStatus(await t.api.call("GET", "/v1/usage-batches?limit=1", { key: t.w.keys.finance }), 200).body;
    expect(one.data[0].id).toBe(m2.batch_id);
    const next = expectStatus(await t.api.call("GET", `/v1/usage-batches?limit=100&cursor=${one.next_cursor}`, { key: t.w.keys.finance }), 200).body.data;
    expect(next.map((b: { id: string }) => b.id)).not.toContain(m2.batch_id);
    expect(next.length).toBeGreaterThan(2);
    await expectRefused(t.api, () => t.api.call("GET", "/v1/usage-batches?cursor=nope", { key: t.w.keys.finance }), 400, "invalid_request", "cursor");
  });
});

describe("a batch waiting for admission", () => {
  it.skipIf(!process.env.TEST_DATABASE_URL)("writes nothing when its key is revoked while it waits: 401, as for a request after the revocation", async () => {
    // One batch's bytes at a time: the second waits for the first.
    const api = await testApi({ db: t.api.db, config: { BATCH_BODIES_IN_FLIGHT_BYTES: 1 } });
    try {
      const created = expectStatus(await api.call("POST", "/v1/api-keys", { body: { name: "soon revoked", role: "marketplace", scope_id: "m1" } }), 201).body;
      // The first batch is held inside its transaction: m1's funding lock is taken exclusively by another connection.
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      let held!: () => void;
      const isHeld = new Promise<void>((r) => (held = r));
      const holder = api.db.transaction(async (tx: Queryable) => {
        await tx.query("select pg_advisory_xact_lock(hashtextextended('usage-funding:m1', 0))");
        held();
        await released;
      });
      await isHeld;
      const first = api.call("POST", "/v1/usage/batch", { key: t.w.keys.m1, body: { records: [t.w.usage("admission-first")] } });
      await new Promise((r) => setTimeout(r, 200));
      const second = api.call("POST", "/v1/usage/batch", { key: created.secret, body: { records: [t.w.usage("admission-revoked")] } });
      await new Promise((r) => setTimeout(r, 200));
      expectStatus(await api.call("POST", `/v1/api-keys/${created.id}/revoke`), 200);
      release();
      await holder;
      expectStatus(await first, 200);
      const refused = await second;
      expect(refused.status).toBe(401);
      expect(refused.body.detail).toMatch(/revoked while the request waited/);
      expect(await api.db.query("select 1 from usage_records where external_id = 'admission-revoked'")).toEqual([]);
      expect(await api.db.query("select 1 from usage_records where external_id = 'admission-first'")).toHaveLength(1);
    } finally {
      await api.close();
    }
  });
});
