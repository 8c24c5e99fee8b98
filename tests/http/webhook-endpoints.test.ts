import { describe, expect, it } from "vitest";
import { expectRefused, expectStatus, TEST_WEBHOOK_KEY, testApi, worldPerFile } from "../support/http.js";

/** The webhook endpoint routes: CRUD, the secret shown once, tenant isolation, bad input and server-side request forgery. */
const t = worldPerFile();
const create = (key: string, body: unknown) => t.api.call("POST", "/v1/webhook-endpoints", { key, body });

describe("webhook endpoints", () => {
  it("are created with a secret shown once, read, changed and deleted by their tenant", async () => {
    const res = expectStatus(
      await t.api.call("POST", "/v1/webhook-endpoints", {
        key: t.w.keys.m1,
        body: { url: "http://127.0.0.1:9/hooks", event_types: ["usage.batch.completed"] },
        idempotencyKey: "wh-1",
      }),
      201,
    );
    const e = res.body;
    expect(e).toMatchObject({
      url: "http://127.0.0.1:9/hooks",
      event_types: ["usage.batch.completed"],
      status: "enabled",
      marketplace_id: "m1",
      operator_id: null,
      failed_attempts: 0,
    });
    expect(e.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    // The secret is stored encrypted, never in clear, and a replay does not show it again.
    const [row] = await t.api.db.query<{ secret: string }>("select secret from webhook_endpoints where id = $1", [e.id]);
    expect(row!.secret).not.toContain(e.secret.slice(6, 20));
    const replay = expectStatus(
      await t.api.call("POST", "/v1/webhook-endpoints", {
        key: t.w.keys.m1,
        body: { url: "http://127.0.0.1:9/hooks", event_types: ["usage.batch.completed"] },
        idempotencyKey: "wh-1",
      }),
      201,
    );
    expect(replay.body).toMatchObject({ id: e.id, secret: null });
    const got = expectStatus(await t.api.call("GET", `/v1/webhook-endpoints/${e.id}`, { key: t.w.keys.m1 }), 200).body;
    expect(got).not.toHaveProperty("secret");
    const changed = expectStatus(
      await t.api.call("PATCH", `/v1/webhook-endpoints/${e.id}`, { key: t.w.keys.m1, body: { event_types: [], status: "disabled", description: "paused" } }),
      200,
    ).body;
    expect(changed).toMatchObject({ event_types: [], status: "disabled", disabled_reason: "requested", description: "paused" });
    const rotated = expectStatus(
      await t.api.call("POST", `/v1/webhook-endpoints/${e.id}/rotate-secret`, { key: t.w.keys.m1, body: { overlap_seconds: 3600 } }),
      200,
    ).body;
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.previous_secret_expires_at).not.toBeNull();
    expectStatus(await t.api.call("GET", `/v1/webhook-endpoints/${e.id}/deliveries`, { key: t.w.keys.m1 }), 200);
    expectStatus(await t.api.call("DELETE", `/v1/webhook-endpoints/${e.id}`, { key: t.w.keys.m1 }), 200);
    expect((await t.api.call("GET", `/v1/webhook-endpoints/${e.id}`, { key: t.w.keys.m1 })).status).toBe(404);
  });

  it("are each tenant's own: another tenant's id answers 404, lists show one's own (finance and admin: all)", async () => {
    const mine = expectStatus(await create(t.w.keys.m1, { url: "http://127.0.0.1:9/m1" }), 201).body;
    const theirs = expectStatus(await create(t.w.keys.o2, { url: "http://127.0.0.1:9/o2" }), 201).body;
    expect(theirs).toMatchObject({ operator_id: "o2", marketplace_id: null });
    const platform = expectStatus(await create(t.w.keys.finance, { url: "http://127.0.0.1:9/all" }), 201).body;
    expect(platform).toMatchObject({ operator_id: null, marketplace_id: null });
    const ids = async (key: string) => expectStatus(await t.api.call("GET", "/v1/webhook-endpoints", { key }), 200).body.data.map((e: { id: string }) => e.id);
    expect(await ids(t.w.keys.m1)).toEqual([mine.id]);
    expect(await ids(t.w.keys.m2)).toEqual([]);
    expect(await ids(t.w.keys.o2)).toEqual([theirs.id]);
    expect(await ids(t.w.keys.finance)).toEqual(expect.arrayContaining([mine.id, theirs.id, platform.id]));
    for (const [key, id] of [
      [t.w.keys.m2, mine.id],
      [t.w.keys.o1, theirs.id],
      [t.w.keys.m1, platform.id],
    ] as const) {
      for (const [method, path, body] of [
        ["GET", `/v1/webhook-endpoints/${id}`, undefined],
        ["PATCH", `/v1/webhook-endpoints/${id}`, { status: "disabled" }],
        ["DELETE", `/v1/webhook-endpoints/${id}`, undefined],
        ["POST", `/v1/webhook-endpoints/${id}/rotate-secret`, {}],
        ["GET", `/v1/webhook-endpoints/${id}/deliveries`, undefined],
        ["POST", `/v1/webhook-endpoints/${id}/deliveries/evt_x/redeliver`, undefined],
      ] as const)
        await expectRefused(t.api, () => t.api.call(method, path, { key, body }), 404, "webhook_endpoint_not_found");
    }
  });

  it("a tenant's endpoint is managed by its own keys only: finance and admin keys read it, and are refused changing, deleting, rotating or redelivering it", async () => {
    const mine = expectStatus(await create(t.w.keys.m1, { url: "http://127.0.0.1:9/m1-managed" }), 201).body;
    const theirs = expectStatus(await create(t.w.keys.o2, { url: "http://127.0.0.1:9/o2-managed" }), 201).body;
    for (const key of [t.w.keys.finance, undefined /* the bootstrap admin key */]) {
      for (const e of [mine, theirs]) {
        expectStatus(await t.api.call("GET", `/v1/webhook-endpoints/${e.id}`, { key }), 200);
        expectStatus(await t.api.call("GET", `/v1/webhook-endpoints/${e.id}/deliveries`, { key }), 200);
        for (const [method, path, body] of [
          ["PATCH", `/v1/webhook-endpoints/${e.id}`, { url: "http://127.0.0.1:9/taken-over" }],
          ["PATCH", `/v1/webhook-endpoints/${e.id}`, { status: "disabled" }],
          ["DELETE", `/v1/webhook-endpoints/${e.id}`, undefined],
          ["POST", `/v1/webhook-endpoints/${e.id}/rotate-secret`, { overlap_seconds: 0 }],
          ["POST", `/v1/webhook-endpoints/${e.id}/deliveries/evt_x/redeliver`, undefined],
        ] as const) {
          const res = await expectRefused(t.api, () => t.api.call(method, path, { key, body }), 403, "forbidden");
          expect(res.body.detail).toMatch(/only its own keys manage it/);
          expect(JSON.stringify(res.body)).not.toMatch(/whsec_/);
        }
      }
    }
    // Unchanged, and still managed by its tenant.
    expect(expectStatus(await t.api.call("GET", `/v1/webhook-endpoints/${mine.id}`, { key: t.w.keys.m1 }), 200).body).toMatchObject({
      url: "http://127.0.0.1:9/m1-managed",
      status: "enabled",
    });
    expectStatus(await t.api.call("POST", `/v1/webhook-endpoints/${mine.id}/rotate-secret`, { key: t.w.keys.m1, body: {} }), 200);
    // The platform's own endpoints stay finance's and admin's to manage.
    const platform = expectStatus(await create(t.w.keys.finance, { url: "http://127.0.0.1:9/platform-managed" }), 201).body;
    expectStatus(await t.api.call("PATCH", `/v1/webhook-endpoints/${platform.id}`, { body: { status: "disabled" } }), 200);
    expectStatus(await t.api.call("POST", `/v1/webhook-endpoints/${platform.id}/rotate-secret`, { key: t.w.keys.finance, body: {} }), 200);
  });

  it("refuse bad input, naming the field, and write nothing", async () => {
    const key = t.w.keys.m1;
    await expectRefused(t.api, () => create(key, { url: "http://127.0.0.1:9/x", extra: 1 }), 400, "invalid_request");
    await expectRefused(t.api, () => create(key, { url: "http://127.0.0.1:9/x", event_types: ["Not A Type"] }), 400, "invalid_request", "event_types.0");
    // A well-formed type the log never appends would subscribe the endpoint to nothing: refused, listing the types.
    const misspelt = await expectRefused(
      t.api,
      () => create(key, { url: "http://127.0.0.1:9/x", event_types: ["payout.confirmd"] }),
      400,
      "invalid_request",
      "event_types.0",
    );
    expect(misspelt.body.detail).toContain("payout.confirmed");
    await expectRefused(t.api, () => create(key, {}), 400, "invalid_request", "url");
    await expectRefused(t.api, () => create(key, { url: "not a url" }), 422, "webhook_url_refused", "url");
    await expectRefused(t.api, () => t.api.call("GET", `/v1/webhook-endpoints/not-a-uuid`, { key }), 400, "invalid_request", "id");
  });
});

describe("server-side request forgery", () => {
  it("refuses private, loopback, link-local and unspecified addresses and other schemes unless the deployment allows them", async () => {
    const api = await testApi({ db: t.api.db, webhooks: { secretsKey: TEST_WEBHOOK_KEY, allowPrivate: false } });
    try {
      const key = t.w.keys.m1;
      for (const url of [
        "http://127.0.0.1:8080/hooks",
        "http://localhost/hooks",
        "http://10.1.2.3/hooks",
        "https://172.16.0.1/hooks",
        "https://192.168.1.10/hooks",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/hooks",
        "http://[fe80::1]/hooks",
        "http://[fd00::1]/hooks",
        "http://[::ffff:127.0.0.1]/hooks",
        // Other spellings of 127.0.0.1 in IPv6 (IPv4-compatible, IPv4-translated, 6to4), and reserved ranges.
        "http://[::127.0.0.1]/hooks",
        "http://[::7f00:1]/hooks",
        "http://[::ffff:0:7f00:1]/hooks",
        "http://[2002:7f00:1::]/hooks",
        "http://[2001:0:7f00:1::]/hooks",
        "http://[2001:db8::1]/hooks",
        "http://[100::1]/hooks",
        "http://[fec0::1]/hooks",
        "http://[64:ff9b:1::7f00:1]/hooks",
        "http://192.88.99.1/hooks",
        "http://203.0.113.7/hooks",
        "http://0.0.0.0/hooks",
        "http://2130706433/hooks",
        "ftp://example.com/hooks",
        "file:///etc/passwd",
        "https://user:pw@93.184.216.34/hooks",
      ]) {
        const res = await expectRefused(api, () => api.call("POST", "/v1/webhook-endpoints", { key, body: { url } }), 422, "webhook_url_refused", "url");
        expect(res.body.detail, url).toContain("url");
      }
      const ok = expectStatus(await api.call("POST", "/v1/webhook-endpoints", { key, body: { url: "https://93.184.216.34/hooks" } }), 201).body;
      // Public IPv6, and a public IPv4 in the mapped and NAT64 forms: sent to.
      for (const url of ["https://[2606:2800:220:1:248:1893:25c8:1946]/hooks", "https://[::ffff:93.184.216.34]/h", "https://[64:ff9b::5db8:d822]/h"])
        expectStatus(await api.call("POST", "/v1/webhook-endpoints", { key, body: { url } }), 201);
      await expectRefused(
        api,
        () => api.call("PATCH", `/v1/webhook-endpoints/${ok.id}`, { key, body: { url: "http://10.0.0.1/" } }),
        422,
        "webhook_url_refused",
        "url",
      );
    } finally {
      await api.close();
    }
  });
});
