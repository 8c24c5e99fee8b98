import { describe, expect, it } from "vitest";
import { expectStatus, worldPerFile } from "../support/http.js";
import { holdLock } from "../support/locks.js";

/**
 * Revocation and a key's writes exclude each other (src/db/queries/key-guard.ts, docs/api.md): a
 * write whose key is revoked while it is under way writes nothing (401), and once the revocation
 * has answered, nothing more is written with the key.
 */
const t = worldPerFile();
const onPostgres = !process.env.TEST_DATABASE_URL;

const newMarketplaceKey = async (name: string) =>
  expectStatus(await t.api.call("POST", "/v1/api-keys", { body: { name, role: "marketplace", scope_id: "m1" } }), 201).body as { id: string; secret: string };

const hold = (statement: string) => holdLock(t.api.db, statement);

const settledWithin = async (p: Promise<unknown>, ms: number) =>
  Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

describe("a key revoked while its write is under way", () => {
  it.skipIf(onPostgres)("a single record queued in the group commit writes nothing: 401", async () => {
    const key = await newMarketplaceKey("revoked while queued");
    // The record's group commit waits for m1's funding lock, taken exclusively by another connection.
    const lock = hold("select pg_advisory_xact_lock(hashtextextended('usage-funding:m1', 0))");
    await lock.isHeld;
    const write = t.api.call("POST", "/v1/usage", { key: key.secret, body: t.w.usage("revoked-while-queued") });
    await new Promise((r) => setTimeout(r, 300));
    // The write has not taken its key's lock yet: the revocation does not wait for it.
    expectStatus(await t.api.call("POST", `/v1/api-keys/${key.id}/revoke`), 200);
    await lock.release();
    const refused = await write;
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe("unauthorized");
    expect(refused.body.detail).toMatch(/revoked before this write was committed/);
    expect(await t.api.db.query("select 1 from usage_records where external_id = 'revoked-while-queued'")).toEqual([]);
    expect(await t.api.db.query("select 1 from http_idempotency h join audit_log a on a.idempotency_key = h.key where a.key_id = $1", [key.id])).toEqual([]);
  });

  it.skipIf(onPostgres)("a write that holds its key when the revocation comes is committed first; the revocation answers after it", async () => {
    const key = await newMarketplaceKey("revoked while writing");
    // Every balance row locked from another connection: the write stops at its balance locks, after its key's.
    const rows = hold("select 1 from account_balances for update");
    await rows.isHeld;
    const write = t.api.call("POST", "/v1/usage", { key: key.secret, body: t.w.usage("written-before-revocation") });
    await new Promise((r) => setTimeout(r, 300));
    const revoke = t.api.call("POST", `/v1/api-keys/${key.id}/revoke`);
    expect(await settledWithin(revoke, 500)).toBe(false);
    await rows.release();
    expectStatus(await write, 201);
    expectStatus(await revoke, 200);
    expect(await t.api.db.query("select 1 from usage_records where external_id = 'written-before-revocation'")).toHaveLength(1);
    // After the revocation: refused at the door.
    expect((await t.api.call("POST", "/v1/usage", { key: key.secret, body: t.w.usage("after-revocation") })).status).toBe(401);
  });

  it.skipIf(onPostgres)("a write that waits for a revocation under way reads the key after it: 401", async () => {
    const key = await newMarketplaceKey("revoked while both wait");
    // The revocation takes the key's lock, then waits for the key's row, held from another connection.
    const row = hold(`select 1 from api_keys where id = '${key.id}' for update`);
    await row.isHeld;
    const revoke = t.api.call("POST", `/v1/api-keys/${key.id}/revoke`);
    await new Promise((r) => setTimeout(r, 300));
    // The write reaches its key's lock while the revocation holds it, and waits for it to commit.
    const write = t.api.call("POST", "/v1/usage", { key: key.secret, body: t.w.usage("waited-for-revocation") });
    expect(await settledWithin(write, 500)).toBe(false);
    await row.release();
    expectStatus(await revoke, 200);
    const refused = await write;
    expect(refused.status).toBe(401);
    expect(await t.api.db.query("select 1 from usage_records where external_id = 'waited-for-revocation'")).toEqual([]);
  });

  it.skipIf(onPostgres)("a usage batch queued behind the funding lock writes nothing: 401", async () => {
    const key = await newMarketplaceKey("batch revoked while queued");
    const lock = hold("select pg_advisory_xact_lock(hashtextextended('usage-funding:m1', 0))");
    await lock.isHeld;
    const write = t.api.call("POST", "/v1/usage/batch", { key: key.secret, body: { records: [t.w.usage("batch-revoked-1"), t.w.usage("batch-revoked-2")] } });
    await new Promise((r) => setTimeout(r, 300));
    expectStatus(await t.api.call("POST", `/v1/api-keys/${key.id}/revoke`), 200);
    await lock.release();
    expect((await write).status).toBe(401);
    expect(await t.api.db.query("select 1 from usage_records where external_id like 'batch-revoked-%'")).toEqual([]);
  });

  it.skipIf(onPostgres)("other keys' records in the same group commit are written", async () => {
    const key = await newMarketplaceKey("revoked beside others");
    const lock = hold("select pg_advisory_xact_lock(hashtextextended('usage-funding:m1', 0))");
    await lock.isHeld;
    const mine = t.api.call("POST", "/v1/usage", { key: key.secret, body: t.w.usage("beside-revoked") });
    const others = [1, 2, 3].map((i) => t.api.call("POST", "/v1/usage", { key: t.w.keys.m1, body: t.w.usage(`beside-other-${i}`) }));
    await new Promise((r) => setTimeout(r, 300));
    expectStatus(await t.api.call("POST", `/v1/api-keys/${key.id}/revoke`), 200);
    await lock.release();
    expect((await mine).status).toBe(401);
    for (const o of others) expectStatus(await o, 201);
    expect(await t.api.db.query("select 1 from usage_records where external_id like 'beside-other-%'")).toHaveLength(3);
    expect(await t.api.db.query("select 1 from usage_records where external_id = 'beside-revoked'")).toEqual([]);
  });
});

describe("revoking", () => {
  it("an admin key may revoke itself; it is refused from then on", async () => {
    const admin = expectStatus(await t.api.call("POST", "/v1/api-keys", { body: { name: "leaving admin", role: "admin" } }), 201).body as {
      id: string;
      secret: string;
    };
    expectStatus(await t.api.call("POST", `/v1/api-keys/${admin.id}/revoke`, { key: admin.secret }), 200);
    expect((await t.api.call("GET", "/v1/api-keys", { key: admin.secret })).status).toBe(401);
  });

  it("a write refused for a revoked key is answered 401 with the problem's code", async () => {
    const key = await newMarketplaceKey("revoked first");
    expectStatus(await t.api.call("POST", `/v1/api-keys/${key.id}/revoke`), 200);
    const res = await t.api.call("POST", "/v1/usage", { key: key.secret, body: t.w.usage("never") });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("unauthorized");
  });
});
