import { describe, expect, it } from "vitest";
import { expectStatus, worldPerFile } from "../support/http.js";

/** GET /v1/holds: filters, pages, and what each key may see. */
const t = worldPerFile();

const open = async (key: string, customer: string, amount: string, marketplace?: string) =>
  expectStatus(
    await t.api.call("POST", "/v1/holds", {
      key,
      body: { customer_id: customer, asset: "USDC", amount, ...(marketplace ? { marketplace_id: marketplace } : {}) },
    }),
    201,
  ).body;

describe("GET /v1/holds", () => {
  it("lists a marketplace's holds by id, filtered by customer, status and asset, a page at a time; never another marketplace's", async () => {
    const mine = [await open(t.w.keys.m1, "c1", "10"), await open(t.w.keys.m1, "c1", "20"), await open(t.w.keys.m1, "c1", "30")];
    const theirs = await open(t.w.keys.m2, "c1", "40");
    expectStatus(await t.api.call("POST", `/v1/holds/${mine[1].id}/close`, { key: t.w.keys.m1 }), 200);

    const seen: { id: string }[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const body: { data: { id: string }[]; next_cursor: string | null; limit: number } = expectStatus(
        await t.api.call("GET", `/v1/holds?limit=2${cursor ? `&cursor=${cursor}` : ""}`, { key: t.w.keys.m1 }),
        200,
      ).body;
      expect(body.limit).toBe(2);
      seen.push(...body.data);
      cursor = body.next_cursor;
      if (cursor === null) break;
    }
    const ids = seen.map((h) => h.id);
    expect(ids).toEqual([...ids].sort());
    expect(new Set(ids).size).toBe(ids.length);
    for (const h of mine) expect(ids).toContain(h.id);
    expect(ids).not.toContain(theirs.id);
    // Each as GET /v1/holds/{id} reads it.
    for (const h of seen) expect(h).toEqual(expectStatus(await t.api.call("GET", `/v1/holds/${h.id}`, { key: t.w.keys.m1 }), 200).body);

    const closed = expectStatus(await t.api.call("GET", "/v1/holds?status=closed", { key: t.w.keys.m1 }), 200).body.data;
    expect(closed.map((h: { id: string }) => h.id)).toEqual([mine[1].id]);
    expect(expectStatus(await t.api.call("GET", "/v1/holds?customer_id=nobody", { key: t.w.keys.m1 }), 200).body.data).toEqual([]);
    // Naming another marketplace finds nothing; admin and finance see both and may filter.
    expect(expectStatus(await t.api.call("GET", "/v1/holds?marketplace_id=m2", { key: t.w.keys.m1 }), 200).body.data).toEqual([]);
    const all = expectStatus(await t.api.call("GET", "/v1/holds?limit=1000", { key: t.w.keys.finance }), 200).body.data.map((h: { id: string }) => h.id);
    expect(all).toContain(theirs.id);
    const m2 = expectStatus(await t.api.call("GET", "/v1/holds?marketplace_id=m2", { key: t.w.keys.admin }), 200).body.data;
    expect(m2.every((h: { marketplace_id: string }) => h.marketplace_id === "m2")).toBe(true);
  });

  it("refuses what it cannot read: an operator key, a cursor it did not give, an unknown asset or status", async () => {
    expect((await t.api.call("GET", "/v1/holds", { key: t.w.keys.o1 })).status).toBe(403);
    expect((await t.api.call("GET", "/v1/holds?cursor=abc", { key: t.w.keys.m1 })).body).toMatchObject({ status: 400, code: "invalid_request" });
    expect((await t.api.call("GET", "/v1/holds?asset=NOPE", { key: t.w.keys.m1 })).body).toMatchObject({ status: 404, code: "asset_not_found" });
    expect((await t.api.call("GET", "/v1/holds?status=gone", { key: t.w.keys.m1 })).body).toMatchObject({ status: 400, code: "invalid_request" });
  });
});
