import { describe, expect, it } from "vitest";
import { expectStatus, worldPerFile } from "../support/http.js";

/**
 * A unit is any name of the API's pattern; only the time units (src/domain/earnings.ts) have paid
 * hours and capacity. A unit named like a property of every JavaScript object ("constructor") is
 * an ordinary unit: the record is rated or refused on its own, and never fails the batch it is in.
 */
const t = worldPerFile();

describe("a unit named like an object property", () => {
  it("in a batch, a record refused by rating gets its own result beside the others", async () => {
    const records = [t.w.usage("unit-ok-1"), t.w.usage("unit-ctor-1", { unit: "constructor", customer_id: "nobody" })];
    const res = expectStatus(await t.api.call("POST", "/v1/usage/batch", { key: t.w.keys.m1, body: { records } }), 200).body;
    expect(res.results.map((r: { status: string; code?: string }) => `${r.status}:${r.code ?? ""}`)).toEqual(["accepted:", "rejected:customer_not_found"]);
  });

  it("a single record refused by rating is answered with its refusal", async () => {
    const res = await t.api.call("POST", "/v1/usage", { key: t.w.keys.m1, body: t.w.usage("unit-ctor-2", { unit: "constructor", customer_id: "nobody" }) });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("customer_not_found");
  });

  it("a record that rates is accepted, with no paid hours (not a time unit)", async () => {
    const res = expectStatus(await t.api.call("POST", "/v1/usage", { key: t.w.keys.m1, body: t.w.usage("unit-ctor-3", { unit: "constructor" }) }), 201).body;
    expect(res.unit).toBe("constructor");
    const stored = await t.api.db.query<{ unit: string }>("select unit from usage_records where external_id = 'unit-ctor-3'");
    expect(stored).toEqual([{ unit: "constructor" }]);
  });
});
