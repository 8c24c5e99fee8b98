import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createResponseWriter, type StoredResponse } from "../../src/services/response-store.js";
import { freshDatabase, type TestDatabase } from "../support/db.js";

describe("responses remembered for an Idempotency-Key", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await freshDatabase();
  });
  afterAll(async () => {
    await db.destroy();
  });

  const response = (key: string, body: unknown): StoredResponse => ({
    scope: "tenant-a",
    key,
    method: "POST",
    path: "/v1/usage",
    hash: `h-${key}`,
    status: 201,
    body: JSON.stringify(body),
  });
  const stored = () =>
    db.query<{ key: string; scope: string; status: number; body: unknown }>("select key, scope, status, body from http_idempotency order by key");

  it("stores each body as it was answered, in statements of bounded size, first response kept", async () => {
    const writer = createResponseWriter(db, { statementBytes: 150 });
    const bodies = {
      a: { id: "a", text: 'quotes " and \\ and \u00e9 and newline\n', nested: [1, { x: null }] },
      b: { s: "tenant-b", k: "other-key", amount: "340282366920938463463374607431768211455" },
      c: [],
    };
    await Promise.all(Object.entries(bodies).map(([k, b]) => writer.submit(response(k, b))));
    await writer.submit(response("a", { id: "second answer" }));
    await writer.close();
    const rows = await stored();
    expect(rows.map((r) => [r.key, r.scope, r.status])).toEqual([
      ["a", "tenant-a", 201],
      ["b", "tenant-a", 201],
      ["c", "tenant-a", 201],
    ]);
    expect(rows.map((r) => r.body)).toEqual([bodies.a, bodies.b, bodies.c]);
  });
});
