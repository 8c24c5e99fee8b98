import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testApi, world, type TestApi } from "../support/http.js";
import type { World } from "../support/security.js";

/**
 * Generated hostile query strings and headers against every GET route of the OpenAPI document
 * (so a new route is covered without being listed): the answer is never a 5xx, and a refusal is
 * problem+json.
 */
let api: TestApi;
let w: World;
let gets: Array<{ path: string; query: string[] }> = [];
const seen = new Map<number, number>();
beforeAll(async () => {
  api = await testApi();
  w = await world(api);
  const doc = (await api.call("GET", "/openapi.json", { key: null })).body as {
    paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string }> }>>;
  };
  gets = Object.entries(doc.paths)
    .filter(([path, ops]) => path.startsWith("/v1/") && ops.get)
    .map(([path, ops]) => ({ path, query: (ops.get!.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name) }));
});
afterAll(async () => api.close());

const hostile = fc.oneof(
  fc.string({ maxLength: 50 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.constantFrom(
    "",
    " ",
    "-1",
    "0",
    "1e309",
    "NaN",
    "99999999999999999999999999",
    (1n << 256n).toString(),
    "'; drop table transfers; --",
    "%00",
    "%zz",
    "x".repeat(5000),
    "2026-13-45T99:99:99Z",
    "true",
    "null",
    "[]",
    "{}",
    "../../etc/passwd",
    "\u0000",
    "💸",
  ),
  fc.integer().map(String),
);

/** A concrete path: ids of the world where the route takes them, else hostile values. */
const concrete = (path: string, value: string) =>
  path
    .replace("{id}", path.startsWith("/v1/operators") ? "o1" : path.startsWith("/v1/accounts") ? w.m1Customer.id : value)
    .replace(/\{[a-z_]+\}/g, encodeURIComponent(value));

describe("hostile query strings and headers on every GET route", () => {
  it("covers some routes", () => {
    expect(gets.length).toBeGreaterThan(15);
  });

  it("query strings: known parameters with hostile values, unknown ones, repeated ones", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 10_000 }),
        fc.array(fc.tuple(fc.boolean(), hostile), { maxLength: 4 }),
        hostile,
        async (pick, params, pathValue) => {
          const route = gets[pick % gets.length]!;
          const search = new URLSearchParams();
          params.forEach(([known, value], i) => {
            const name = known && route.query.length > 0 ? route.query[i % route.query.length]! : `x_${i}`;
            search.append(name, value);
          });
          const url = `${concrete(route.path, pathValue)}?${search.toString()}`;
          const res = await api.call("GET", url);
          seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
          expect(res.status, `${url} -> ${JSON.stringify(res.body).slice(0, 200)}`).toBeLessThan(500);
          if (res.status >= 400) expect(res.headers.get("content-type"), url).toMatch(/^application\/problem\+json/);
        },
      ),
      { numRuns: 400 },
    );
    // Both kinds of answer were exercised: requests that pass and requests that are refused.
    expect(seen.get(200) ?? 0, JSON.stringify([...seen])).toBeGreaterThan(20);
    expect(
      [...seen.keys()].some((s) => s >= 400),
      JSON.stringify([...seen]),
    ).toBe(true);
  });

  it("headers: odd authorization, request ids, accept and content types", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 10_000 }),
        fc.record({
          authorization: fc.oneof(
            fc.constant(undefined),
            fc.string({ maxLength: 300 }).map((s) => `Bearer ${s}`),
            fc.constantFrom("Basic abc", "Bearer", "bearer  x", "Bearer " + "A".repeat(5000)),
          ),
          "x-request-id": fc.oneof(fc.constant(undefined), fc.string({ maxLength: 200 })),
          accept: fc.oneof(fc.constant(undefined), fc.constantFrom("text/csv", "application/xml", "*/*", "")),
          "content-type": fc.oneof(fc.constant(undefined), fc.constantFrom("text/plain", "application/json; charset=latin1")),
        }),
        async (pick, headers) => {
          const route = gets[pick % gets.length]!;
          const clean = Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== undefined && /^[\x20-\x7e]*$/.test(v))) as Record<string, string>;
          const res = await api.call("GET", concrete(route.path, "01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e"), {
            key: clean.authorization === undefined ? undefined : null,
            headers: clean,
          });
          expect(res.status, `${route.path} ${JSON.stringify(clean).slice(0, 200)} -> ${JSON.stringify(res.body).slice(0, 200)}`).toBeLessThan(500);
          if (res.status >= 400) expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
        },
      ),
      { numRuns: 300 },
    );
  });
});
