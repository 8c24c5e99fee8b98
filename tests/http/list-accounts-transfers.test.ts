import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { ago } from "../support/clock.js";
import { expectRefused, expectStatus, worldPerFile } from "../support/http.js";
import type { World } from "../support/security.js";

/** GET /v1/accounts and GET /v1/transfers: filters, pages, and what each key may see of them. */
const t = worldPerFile();
type Item = { id: string; [k: string]: any }; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Every item of a list, walking its pages `limit` at a time; checks that no page repeats an item. */
async function walk(path: string, key: string, limit: number): Promise<Item[]> {
  const out: Item[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 1000; pages++) {
    const sep = path.includes("?") ? "&" : "?";
    const res = expectStatus(await t.api.call("GET", `${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, { key }), 200);
    expect(res.body.data.length).toBeLessThanOrEqual(limit);
    out.push(...res.body.data);
    cursor = res.body.next_cursor;
    if (cursor === null) break;
    expect(res.body.data.length).toBe(limit);
  }
  expect(new Set(out.map((i) => i.id)).size, "no item twice").toBe(out.length);
  return out;
}

const ids = (items: Item[]) => items.map((i) => i.id);
const m1Transfer = async (legs: { debit: string; credit: string; amount: string }[], extra: Record<string, unknown> = {}) =>
  expectStatus(
    await t.api.call("POST", "/v1/transfers", {
      key: t.w.keys.m1,
      body: { legs: legs.map((l) => ({ debit_account_id: l.debit, credit_account_id: l.credit, amount: l.amount })), ...extra },
    }),
    201,
  ).body;

// A few transfers of every status m1 can make: posted, pending, posted from a hold, voided, reversed,
// some dated in the past.
let hold: Item, postedHold: Item, voided: Item, reversed: Item, old: Item[];
beforeAll(async () => {
  const w = t.w;
  const leg = (amount: string) => [{ debit: w.m1Customer.id, credit: w.m1Fees.id, amount }];
  for (let i = 0; i < 5; i++) await m1Transfer(leg(String(10 + i)));
  old = [];
  for (const daysAgo of [40, 30, 20]) old.push(await m1Transfer(leg("7"), { effective_at: ago(daysAgo * 86_400_000).toISOString() }));
  hold = await m1Transfer(leg("3"), { type: "pending" });
  postedHold = await m1Transfer(leg("4"), { type: "pending" });
  expectStatus(await t.api.call("POST", `/v1/transfers/${postedHold.id}/post`, { key: w.keys.m1, body: {} }), 201);
  voided = await m1Transfer(leg("5"), { type: "pending" });
  expectStatus(await t.api.call("POST", `/v1/transfers/${voided.id}/void`, { key: w.keys.m1, body: {} }), 201);
  reversed = await m1Transfer(leg("6"));
  expectStatus(await t.api.call("POST", `/v1/transfers/${reversed.id}/reverse`, { key: w.keys.m1, body: {} }), 201);
});

const tenants = (k: World["keys"]) => [
  ["finance", k.finance],
  ["m1", k.m1],
  ["m2", k.m2],
  ["o1", k.o1],
  ["o2", k.o2],
];

describe("GET /v1/accounts", () => {
  it("walks every account by id in pages, with no gap and no repeat", async () => {
    const all = await walk("/v1/accounts", t.w.keys.admin, 1000);
    const [{ n }] = (await t.api.db.query<{ n: string }>("select count(*)::text as n from accounts")) as [{ n: string }];
    expect(all.length).toBe(Number(n));
    expect(ids(all)).toEqual([...ids(all)].sort());
    for (const limit of [1, 2, 3, 7]) expect(ids(await walk("/v1/accounts", t.w.keys.admin, limit))).toEqual(ids(all));
    // Each is what the read by id answers.
    expect(all.find((a) => a.id === t.w.m1Customer.id)).toEqual(t.w.m1Customer);
  });

  it("shows each key exactly the accounts it may read by id", async () => {
    const all = await walk("/v1/accounts", t.w.keys.admin, 1000);
    for (const [name, key] of tenants(t.w.keys)) {
      const seen = new Set(ids(await walk("/v1/accounts", key!, 4)));
      for (const a of all) {
        const res = await t.api.call("GET", `/v1/accounts/${a.id}`, { key });
        expect(res.status === 200, `${name} and account ${a.ref ?? a.id} (${a.marketplace_id ?? "global"})`).toBe(seen.has(a.id));
      }
    }
    expect((await walk("/v1/accounts", t.w.keys.finance, 1000)).length).toBe(all.length);
    // The operator sees its payable only; a marketplace its own marketplace's accounts only.
    expect(await walk("/v1/accounts", t.w.keys.o1, 10)).toEqual([t.w.o1Payable]);
    expect((await walk("/v1/accounts", t.w.keys.m2, 10)).every((a) => a.marketplace_id === "m2")).toBe(true);
  });

  it("finds a marketplace's customer account by its ref, without knowing the id", async () => {
    const mine = await walk("/v1/accounts?ref=customer:c1&asset=USDC", t.w.keys.m1, 10);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ marketplace_id: "m1", owner_type: "customer", owner_id: "c1", code: "customer_prepaid", opened_by_service: true });
    expect(expectStatus(await t.api.call("GET", `/v1/accounts/${mine[0]!.id}`, { key: t.w.keys.m1 }), 200).body).toEqual(mine[0]);
    // Both marketplaces have a customer c1: admin and finance see both, or one by marketplace_id.
    const both = await walk("/v1/accounts?ref=customer:c1", t.w.keys.finance, 10);
    expect(both.map((a) => a.marketplace_id).sort()).toEqual(["m1", "m2"]);
    expect(await walk("/v1/accounts?ref=customer:c1&marketplace_id=m2", t.w.keys.admin, 10)).toEqual(both.filter((a) => a.marketplace_id === "m2"));
  });

  it("filters by asset, code, marketplace and owner", async () => {
    const all = await walk("/v1/accounts", t.w.keys.admin, 1000);
    const cases: [string, (a: Item) => boolean][] = [
      ["asset=USDC", (a) => a.asset_id === t.w.asset.id],
      ["code=customer_wallet", (a) => a.code === "customer_wallet"],
      ["marketplace_id=m1", (a) => a.marketplace_id === "m1"],
      ["owner_type=operator", (a) => a.owner_type === "operator"],
      ["owner_type=customer&owner_id=c1", (a) => a.owner_type === "customer" && a.owner_id === "c1"],
      ["marketplace_id=m1&code=marketplace_fees", (a) => a.marketplace_id === "m1" && a.code === "marketplace_fees"],
    ];
    for (const [query, keep] of cases) {
      const expected = all.filter(keep);
      expect(expected.length, query).toBeGreaterThan(0);
      expect(await walk(`/v1/accounts?${query}`, t.w.keys.admin, 2), query).toEqual(expected);
    }
    await expectRefused(t.api, () => t.api.call("GET", "/v1/accounts?asset=NOPE"), 404, "asset_not_found", "asset");
  });

  it("an attacker's filters find nothing of another tenant", async () => {
    const k = t.w.keys;
    expect(await walk("/v1/accounts?marketplace_id=m2", k.m1, 10)).toEqual([]);
    // Both marketplaces opened "wallet:c1": m1 finds its own, never m2's.
    expect(await walk("/v1/accounts?ref=wallet:c1", k.m1, 10)).toEqual([t.w.m1Customer]);
    expect(await walk("/v1/accounts?ref=wallet:c1", k.m2, 10)).toEqual([t.w.m2Customer]);
    expect(await walk("/v1/accounts?owner_type=operator&owner_id=o1", k.m1, 10)).toEqual([]);
    expect(await walk("/v1/accounts?owner_id=o1", k.o2, 10)).toEqual([]);
    expect(await walk("/v1/accounts?owner_type=customer", k.o1, 10)).toEqual([]);
    expect(await walk("/v1/accounts?ref=protocol:fees", k.m1, 10)).toEqual([]);
    // A cursor is a position, not a key: another tenant's account id as the cursor shows only one's own.
    expect((await walk(`/v1/accounts?cursor=${t.w.m2Customer.id}`, k.m1, 10)).every((a) => a.marketplace_id === "m1")).toBe(true);
  });

  it("refuses a bad cursor, limit or filter with a 400 naming it", async () => {
    const bad: [string, string][] = [
      ["cursor=abc", "cursor"],
      ["limit=0", "limit"],
      ["limit=1001", "limit"],
      ["limit=ten", "limit"],
      ["ref=%20x", "ref"],
      ["asset=usdc", "asset"],
      ["marketplace=m1", "marketplace"],
    ];
    for (const [query, field] of bad) await expectRefused(t.api, () => t.api.call("GET", `/v1/accounts?${query}`), 400, "invalid_request", field);
  });
});

describe("GET /v1/transfers", () => {
  it("walks every transfer newest first in pages, with no gap and no repeat", async () => {
    const all = await walk("/v1/transfers", t.w.keys.admin, 1000);
    const [{ n }] = (await t.api.db.query<{ n: string }>("select count(*)::text as n from transfers")) as [{ n: string }];
    expect(all.length).toBe(Number(n));
    const [{ order }] = (await t.api.db.query<{ order: string[] }>("select array_agg(id::text order by seq desc) as order from transfers")) as [
      { order: string[] },
    ];
    expect(ids(all)).toEqual(order);
    for (const limit of [1, 2, 5]) expect(ids(await walk("/v1/transfers", t.w.keys.admin, limit))).toEqual(ids(all));
    // Each is what the read by id answers.
    for (const tr of all.slice(0, 12)) expect(expectStatus(await t.api.call("GET", `/v1/transfers/${tr.id}`), 200).body).toEqual(tr);
  });

  it("shows each key exactly the transfers it may read by id", async () => {
    const all = await walk("/v1/transfers", t.w.keys.admin, 1000);
    expect((await walk("/v1/transfers", t.w.keys.finance, 1000)).length).toBe(all.length);
    for (const [name, key] of tenants(t.w.keys).slice(1)) {
      const seen = new Set(ids(await walk("/v1/transfers", key!, 3)));
      for (const tr of all) {
        const res = await t.api.call("GET", `/v1/transfers/${tr.id}`, { key });
        expect(res.status === 200, `${name} and transfer ${tr.id} (${tr.type})`).toBe(seen.has(tr.id));
      }
    }
    expect(ids(await walk("/v1/transfers", t.w.keys.m1, 1000))).toContain(t.w.fund.id);
    expect(ids(await walk("/v1/transfers", t.w.keys.m2, 1000))).not.toContain(t.w.fund.id);
    // The operator sees its usage's transfer (it credits its payable), not m1's own transfers.
    const o1 = ids(await walk("/v1/transfers", t.w.keys.o1, 1000));
    expect(o1).toContain(t.w.m1Usage.transfer_id);
    expect(o1).not.toContain(t.w.fund.id);
  });

  it("filters by account: the transfers with a leg on it, as its entries say", async () => {
    const list = await walk(`/v1/transfers?account_id=${t.w.m1Fees.id}`, t.w.keys.m1, 4);
    const entries = await walk(`/v1/accounts/${t.w.m1Fees.id}/entries`, t.w.keys.m1, 1000);
    expect(new Set(ids(list))).toEqual(new Set(entries.map((e) => e.transfer_id)));
    for (const tr of list) expect(tr.legs.some((l: Item) => l.debit_account_id === t.w.m1Fees.id || l.credit_account_id === t.w.m1Fees.id)).toBe(true);
    // The operator's own payable: its usage's transfer.
    expect(ids(await walk(`/v1/transfers?account_id=${t.w.o1Payable.id}`, t.w.keys.o1, 10))).toContain(t.w.m1Usage.transfer_id);
  });

  it("filters by status exactly as each transfer's status reads", async () => {
    const all = await walk("/v1/transfers", t.w.keys.admin, 1000);
    const statuses = ["posted", "pending", "voided", "expired", "reversed"];
    for (const status of statuses) {
      const list = await walk(`/v1/transfers?status=${status}`, t.w.keys.admin, 3);
      expect(ids(list), status).toEqual(ids(all.filter((tr) => tr.status === status)));
    }
    const m1 = (status: string) => walk(`/v1/transfers?status=${status}`, t.w.keys.m1, 100).then(ids);
    expect(await m1("pending")).toContain(hold.id);
    expect(await m1("posted")).toContain(postedHold.id);
    expect(await m1("voided")).toContain(voided.id);
    expect(await m1("reversed")).toEqual([reversed.id]);
  });

  it("filters by asset and by effective period [from, to)", async () => {
    const all = await walk("/v1/transfers", t.w.keys.admin, 1000);
    expect(await walk("/v1/transfers?asset=USDC", t.w.keys.admin, 1000)).toEqual(all);
    const from = ago(35 * 86_400_000).toISOString();
    const to = old[2]!.effective_at;
    const inPeriod = await walk(`/v1/transfers?from=${from}&to=${to}`, t.w.keys.m1, 1);
    expect(ids(inPeriod)).toEqual([old[1]!.id]);
    const since = await walk(`/v1/transfers?from=${old[0]!.effective_at}&account_id=${t.w.m1Customer.id}&status=posted`, t.w.keys.m1, 2);
    expect(ids(since)).toEqual(
      ids(all.filter((tr) => tr.effective_at >= old[0]!.effective_at && tr.status === "posted" && JSON.stringify(tr.legs).includes(t.w.m1Customer.id))),
    );
    expect(ids(since)).toEqual(expect.arrayContaining(ids(old)));
  });

  it("an attacker cannot list another tenant's transfers through an account filter", async () => {
    const k = t.w.keys;
    const missing = await expectRefused(t.api, () => t.api.call("GET", `/v1/transfers?account_id=${randomUUID()}`, { key: k.m2 }), 404, "account_not_found");
    for (const [key, account] of [
      [k.m2, t.w.m1Customer.id],
      [k.m1, t.w.m2Customer.id],
      [k.o2, t.w.o1Payable.id],
      [k.o1, t.w.m1Customer.id],
    ]) {
      const res = await expectRefused(t.api, () => t.api.call("GET", `/v1/transfers?account_id=${account}`, { key }), 404, "account_not_found");
      // Exactly as a missing account answers, and as its read by id does.
      expect(Object.keys(res.body).sort()).toEqual(Object.keys(missing.body).sort());
      expect(expectStatus(await t.api.call("GET", `/v1/accounts/${account}`, { key }), 404).body.code).toBe("account_not_found");
    }
    expect(await walk("/v1/transfers?status=pending", k.m2, 100)).toEqual([]);
  });

  it("refuses a bad cursor, limit, status or period with a 400 naming it", async () => {
    const b64 = (s: string) => Buffer.from(s).toString("base64url");
    const bad: [string, string][] = [
      ["cursor=abc", "cursor"],
      [`cursor=${randomUUID()}`, "cursor"],
      [`cursor=${b64("t:x")}`, "cursor"],
      [`cursor=${b64("t:9999999999999999999")}`, "cursor"],
      [`cursor=${b64("e:1")}`, "cursor"],
      ["limit=0", "limit"],
      ["limit=1001", "limit"],
      ["limit=-1", "limit"],
      ["status=settled", "status"],
      ["account_id=nope", "account_id"],
      ["from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z", "from"],
      ["from=yesterday", "from"],
      ["effective_from=2026-01-01T00:00:00Z", "effective_from"],
    ];
    for (const [query, field] of bad) await expectRefused(t.api, () => t.api.call("GET", `/v1/transfers?${query}`), 400, "invalid_request", field);
  });
});
