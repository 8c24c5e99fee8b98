import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chainSettingsFor, startLocalChain, type LocalChain } from "../../scripts/anvil-chain.js";
import { loadChains } from "../../src/chain/config.js";
import { Settlements } from "../../src/chain/settlement.js";
import { unitsToDecimal } from "../../src/domain/money.js";
import { expectRefused, expectStatus, testApi, world, writeCounts, type ApiResponse, type TestApi } from "../support/http.js";
import type { World } from "../support/security.js";

/**
 * The reads of marketplaces, operators, customers and reconciliation runs: what each key sees
 * (its own tenant's, and another tenant's answered exactly like a missing one), pagination over
 * several pages without a gap or a repeat, and the filters.
 */
let api: TestApi;
let w: World;
let chain: LocalChain;
beforeAll(async () => {
  // A real local chain: reconciliation runs read it.
  chain = await startLocalChain();
  const settlements = new Settlements(loadChains({ CHAINS: JSON.stringify([chainSettingsFor(chain)]) }, { TREASURY_SIGNER_KEY: chain.signerKey }));
  api = await testApi({ settlements });
  w = await world(api);
  for (const body of [
    { code: "TUSD", scale: 6, settlement: { kind: "erc20", chain_id: 31337, token_address: chain.token } },
    { code: "ETH", scale: 18, settlement: { kind: "native", chain_id: 31337 } },
  ]) {
    expectStatus(await api.call("POST", "/v1/assets", { body }), 201);
  }
});
afterAll(async () => {
  await api?.close();
  await chain?.stop();
});

const get = async (path: string, key?: string): Promise<ApiResponse> => api.call("GET", path, { key });
const ok = async (path: string, key?: string) => expectStatus(await get(path, key), 200).body;

/** Every item of a list, page by page (`limit` a page), checking each page's size and cursor. */
async function allPages<T>(path: string, limit: number, key?: string): Promise<{ items: T[]; pages: number }> {
  const items: T[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const page = await ok(`${path}${sep}limit=${limit}${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`, key);
    expect(page.data.length).toBeLessThanOrEqual(limit);
    if (page.next_cursor !== null) expect(page.data).toHaveLength(limit);
    items.push(...page.data);
    cursor = page.next_cursor;
    pages++;
  } while (cursor !== null && pages < 100);
  return { items, pages };
}

/** A 404 that says no more than a missing resource's: same status, code and title, and the detail with the id swapped. */
async function expectLikeMissing(foreign: ApiResponse, missing: ApiResponse, code: string, ids: [string, string]) {
  expect(foreign.status, JSON.stringify(foreign.body)).toBe(404);
  expect(missing.status, JSON.stringify(missing.body)).toBe(404);
  const strip = (r: ApiResponse, id: string) => {
    const { request_id: _r, ...rest } = r.body;
    return { ...rest, detail: String(rest.detail).replace(id, "ID") };
  };
  expect(strip(foreign, ids[0])).toEqual(strip(missing, ids[1]));
  expect(foreign.body.code).toBe(code);
}

describe("marketplaces", () => {
  it("admin and finance list every marketplace, by id, over several pages without gaps or repeats", async () => {
    for (const id of ["mk-e", "mk-a", "mk-c", "mk-b", "mk-d"]) {
      expectStatus(await api.call("POST", "/v1/marketplaces", { body: { id, name: `market ${id}`, metadata: { region: id } } }), 201);
    }
    const whole = (await ok("/v1/marketplaces?limit=1000")).data as Array<{ id: string }>;
    const ids = whole.map((m) => m.id);
    expect(ids).toEqual([...ids].sort());
    expect(ids).toEqual(expect.arrayContaining(["m1", "m2", "mk-a", "mk-b", "mk-c", "mk-d", "mk-e"]));
    for (const key of [undefined, w.keys.finance]) {
      const { items, pages } = await allPages<{ id: string }>("/v1/marketplaces", 2, key);
      expect(items).toEqual(whole);
      expect(pages).toBeGreaterThan(2);
    }
    expect(whole.find((m) => m.id === "mk-c")).toEqual({
      id: "mk-c",
      name: "market mk-c",
      metadata: { region: "mk-c" },
      pricing_asset: null,
      rate_policy: "at_payout",
      created_at: expect.any(String),
    });
  });

  it("a marketplace key lists and reads its own marketplace only; another is answered like a missing one", async () => {
    expect(await ok("/v1/marketplaces", w.keys.m1)).toEqual({
      data: [expect.objectContaining({ id: "m1", name: "market m1" })],
      next_cursor: null,
      limit: 100,
    });
    expect(await ok("/v1/marketplaces?cursor=m1", w.keys.m1)).toEqual({ data: [], next_cursor: null, limit: 100 });
    expect(await ok("/v1/marketplaces/m1", w.keys.m1)).toMatchObject({ id: "m1", name: "market m1" });
    expect(await ok("/v1/marketplaces/m2", w.keys.finance)).toMatchObject({ id: "m2", name: "market m2" });
    await expectLikeMissing(await get("/v1/marketplaces/m2", w.keys.m1), await get("/v1/marketplaces/no-such", w.keys.m1), "marketplace_not_found", [
      "m2",
      "no-such",
    ]);
    await expectLikeMissing(await get("/v1/marketplaces/m2", w.keys.m1), await get("/v1/marketplaces/no-such"), "marketplace_not_found", ["m2", "no-such"]);
  });

  it("an operator key may not read marketplaces", async () => {
    expect((await get("/v1/marketplaces", w.keys.o1)).body).toMatchObject({ status: 403, code: "forbidden" });
    expect((await get("/v1/marketplaces/m1", w.keys.o1)).body).toMatchObject({ status: 403, code: "forbidden" });
  });
});

describe("operators", () => {
  beforeAll(async () => {
    // shared-op sells through m1 and m2 (an admin links it to both).
    for (const m of ["m1", "m2"]) {
      expectStatus(await api.call("POST", "/v1/operators", { body: { id: "shared-op", name: "shared", marketplace_id: m } }), 201);
    }
    for (const id of ["op-5", "op-3", "op-1", "op-4", "op-2"]) {
      expectStatus(await api.call("POST", "/v1/operators", { key: w.keys.m1, body: { id, name: `operator ${id}` } }), 201);
    }
    // m2 asks to sell for o1: an invitation, not a link, until o1 accepts.
    expectStatus(await api.call("POST", "/v1/operators", { key: w.keys.m2, body: { id: "o1", name: "whatever" } }), 202);
  });

  it("admin and finance see every operator with all its marketplaces, over several pages", async () => {
    const whole = (await ok("/v1/operators?limit=1000", w.keys.finance)).data as Array<{ id: string; marketplace_ids: string[] }>;
    const ids = whole.map((o) => o.id);
    expect(ids).toEqual([...ids].sort());
    expect(ids).toEqual(expect.arrayContaining(["o1", "o2", "shared-op", "op-1", "op-2", "op-3", "op-4", "op-5"]));
    const { items, pages } = await allPages("/v1/operators", 3);
    expect(items).toEqual(whole);
    expect(pages).toBeGreaterThan(2);
    expect(await ok("/v1/operators/shared-op")).toEqual({
      id: "shared-op",
      name: "shared",
      marketplace_ids: ["m1", "m2"],
      metadata: {},
      created_at: expect.any(String),
    });
    expect(whole.find((o) => o.id === "o1")!.marketplace_ids).toEqual(["m1"]); // the invitation is no link
  });

  it("a marketplace key sees the operators linked to it, and only its own id among their marketplaces", async () => {
    const { items, pages } = await allPages<{ id: string; marketplace_ids: string[] }>("/v1/operators", 2, w.keys.m1);
    expect(pages).toBeGreaterThan(1);
    expect(items.map((o) => o.id)).toEqual(["o1", "op-1", "op-2", "op-3", "op-4", "op-5", "shared-op"]);
    for (const o of items) expect(o.marketplace_ids).toEqual(["m1"]);
    expect((await ok("/v1/operators", w.keys.m2)).data.map((o: { id: string }) => o.id)).toEqual(["o2", "shared-op"]);
    expect((await ok("/v1/operators/shared-op", w.keys.m2)).marketplace_ids).toEqual(["m2"]);
    expect((await ok("/v1/operators/op-3", w.keys.m1)).name).toBe("operator op-3");
    // Not linked (o2), or only invited (o1 by m2): answered as a missing operator.
    await expectLikeMissing(await get("/v1/operators/o2", w.keys.m1), await get("/v1/operators/no-such", w.keys.m1), "operator_not_found", ["o2", "no-such"]);
    await expectLikeMissing(await get("/v1/operators/o1", w.keys.m2), await get("/v1/operators/no-such", w.keys.m2), "operator_not_found", ["o1", "no-such"]);
  });

  it("an operator key sees itself only, with all its marketplaces", async () => {
    // o1 accepts m2's invitation: now it sells through both.
    expectStatus(await api.call("POST", "/v1/operators/o1/invitations/m2/accept", { key: w.keys.o1, body: {} }), 200);
    expect(await ok("/v1/operators", w.keys.o1)).toEqual({
      data: [expect.objectContaining({ id: "o1", marketplace_ids: ["m1", "m2"] })],
      next_cursor: null,
      limit: 100,
    });
    expect(await ok("/v1/operators/o1", w.keys.o1)).toMatchObject({ id: "o1", marketplace_ids: ["m1", "m2"] });
    expect((await ok("/v1/operators/o1", w.keys.m2)).marketplace_ids).toEqual(["m2"]);
    await expectLikeMissing(await get("/v1/operators/o2", w.keys.o1), await get("/v1/operators/no-such", w.keys.o1), "operator_not_found", ["o2", "no-such"]);
    await expectLikeMissing(await get("/v1/operators/shared-op", w.keys.o1), await get("/v1/operators/no-such"), "operator_not_found", [
      "shared-op",
      "no-such",
    ]);
  });
});

describe("customers", () => {
  beforeAll(async () => {
    for (const id of ["cu-6", "cu-2", "cu-4", "cu-1", "cu-5", "cu-3"]) {
      expectStatus(await api.call("POST", "/v1/customers", { key: w.keys.m1, body: { id, billing: "prepaid" } }), 201);
    }
    expectStatus(await api.call("POST", "/v1/customers", { key: w.keys.m2, body: { id: "cu-1", billing: "prepaid", metadata: { of: "m2" } } }), 201);
  });

  type C = { marketplace_id: string; id: string };
  const key = (c: C) => `${c.marketplace_id}/${c.id}`;

  it("admin and finance list every marketplace's customers, by marketplace and id, over several pages; marketplace_id filters", async () => {
    const whole = (await ok("/v1/customers?limit=1000", w.keys.finance)).data as C[];
    const keys = whole.map(key);
    expect(keys).toEqual(expect.arrayContaining(["m1/c1", "m1/m1only", "m1/cu-1", "m1/cu-6", "m2/c1", "m2/cu-1"]));
    expect(new Set(keys).size).toBe(keys.length);
    expect(whole).toEqual(
      [...whole].sort((a, b) => (a.marketplace_id === b.marketplace_id ? (a.id < b.id ? -1 : 1) : a.marketplace_id < b.marketplace_id ? -1 : 1)),
    );
    const { items, pages } = await allPages<C>("/v1/customers", 3);
    expect(items).toEqual(whole);
    expect(pages).toBeGreaterThan(2);
    const m2 = await allPages<C>("/v1/customers?marketplace_id=m2", 1, w.keys.finance);
    expect(m2.items.map(key)).toEqual(["m2/c1", "m2/cu-1"]);
    expect(m2.items[1]).toEqual({
      marketplace_id: "m2",
      id: "cu-1",
      billing: "prepaid",
      metadata: { of: "m2" },
      credit_limits: [],
      created_at: expect.any(String),
      retired_at: null,
    });
    expect((await ok("/v1/customers?marketplace_id=no-such")).data).toEqual([]);
    const m1only = whole.find((c) => key(c) === "m1/m1only");
    expect(m1only).toMatchObject({ billing: "postpaid", credit_limits: [{ asset: "USDC", credit_limit: "1000000000000000000000000" }] });
  });

  it("a marketplace key lists its own customers only; naming another marketplace finds nothing", async () => {
    const { items, pages } = await allPages<C>("/v1/customers", 2, w.keys.m1);
    expect(pages).toBeGreaterThan(2);
    expect(items.map(key)).toEqual(["m1/c1", "m1/cu-1", "m1/cu-2", "m1/cu-3", "m1/cu-4", "m1/cu-5", "m1/cu-6", "m1/m1only"]);
    expect((await ok("/v1/customers?marketplace_id=m1", w.keys.m1)).data.map(key)).toEqual(items.map(key));
    expect(await ok("/v1/customers?marketplace_id=m2", w.keys.m1)).toEqual({ data: [], next_cursor: null, limit: 100 });
    expect(await ok("/v1/customers?marketplace_id=no-such", w.keys.m1)).toEqual({ data: [], next_cursor: null, limit: 100 });
    // A cursor naming another marketplace's customer still lists only its own (none after it here).
    expect((await ok(`/v1/customers?cursor=${encodeURIComponent("m0/a")}`, w.keys.m2)).data.map(key)).toEqual(["m2/c1", "m2/cu-1"]);
  });

  it("reads a prepaid customer with its account and balance per asset, which the account's own balance confirms", async () => {
    const c1 = await ok("/v1/customers/c1", w.keys.m1);
    expect(c1).toMatchObject({ marketplace_id: "m1", id: "c1", billing: "prepaid", credit_limits: [] });
    expect(c1.accounts).toHaveLength(1);
    const [usdc] = c1.accounts;
    expect(usdc).toEqual({
      asset: "USDC",
      account_id: expect.any(String),
      posted: expect.any(String),
      posted_display: unitsToDecimal(BigInt(usdc.posted), 6),
      available: usdc.posted,
      available_display: unitsToDecimal(BigInt(usdc.posted), 6),
      credit_limit: null,
      credit_limit_display: null,
    });
    expect(BigInt(usdc.posted)).toBeGreaterThan(0n);
    // The account id works with the ledger's own routes, for the marketplace's key.
    const balance = await ok(`/v1/accounts/${usdc.account_id}/balance`, w.keys.m1);
    expect({ posted: balance.posted, available: balance.available }).toEqual({ posted: usdc.posted, available: usdc.available });
    expect(await ok("/v1/customers/c1?marketplace_id=m1", w.keys.finance)).toEqual(c1);
    expect(await ok("/v1/customers/c1?marketplace_id=m1", w.keys.m1)).toEqual(c1);
    // A hold reserves the funds (moved aside until it is closed): the balance shows what is left.
    const hold = expectStatus(await api.call("POST", "/v1/holds", { key: w.keys.m1, body: { customer_id: "c1", asset: "USDC", amount: "10" } }), 201).body;
    const held = (await ok("/v1/customers/c1", w.keys.m1)).accounts[0];
    expect(BigInt(held.available)).toBe(BigInt(usdc.available) - 10n);
    expectStatus(await api.call("POST", `/v1/holds/${hold.id}/close`, { key: w.keys.m1 }), 200);
    expect(await ok("/v1/customers/c1", w.keys.m1)).toEqual(c1);
    // The other marketplace's c1 is another customer, with another account.
    const m2c1 = await ok("/v1/customers/c1", w.keys.m2);
    expect(m2c1.marketplace_id).toBe("m2");
    expect(m2c1.accounts[0].account_id).not.toBe(usdc.account_id);
    // A customer with no money yet has no account.
    expect((await ok("/v1/customers/cu-3", w.keys.m1)).accounts).toEqual([]);
  });

  it("reads a postpaid customer with its credit limit and what it owes", async () => {
    const usage = expectStatus(await api.call("POST", "/v1/usage", { key: w.keys.m1, body: w.usage("postpaid-1", { customer_id: "m1only" }) }), 201).body;
    const m1only = await ok("/v1/customers/m1only?marketplace_id=m1");
    expect(m1only.accounts).toEqual([
      {
        asset: "USDC",
        account_id: expect.any(String),
        posted: `-${usage.gross}`,
        posted_display: unitsToDecimal(-BigInt(usage.gross), 6),
        available: `-${usage.gross}`,
        available_display: unitsToDecimal(-BigInt(usage.gross), 6),
        credit_limit: "1000000000000000000000000",
        credit_limit_display: "1000000000000000000",
      },
    ]);
  });

  it("another marketplace's customer is answered like a missing one, however it is named", async () => {
    const missing = await get("/v1/customers/no-such", w.keys.m2);
    await expectLikeMissing(await get("/v1/customers/m1only", w.keys.m2), missing, "customer_not_found", ["m1only", "no-such"]);
    await expectLikeMissing(await get("/v1/customers/m1only?marketplace_id=m1", w.keys.m2), missing, "customer_not_found", ["m1only", "no-such"]);
    await expectLikeMissing(await get("/v1/customers/cu-2?marketplace_id=m1", w.keys.m2), missing, "customer_not_found", ["cu-2", "no-such"]);
    await expectLikeMissing(await get("/v1/customers/m1only?marketplace_id=no-such", w.keys.m2), missing, "customer_not_found", ["m1only", "no-such"]);
    await expectLikeMissing(await get("/v1/customers/m1only?marketplace_id=m2"), await get("/v1/customers/no-such?marketplace_id=m1"), "customer_not_found", [
      "m1only",
      "no-such",
    ]);
  });

  it("admin and finance name the marketplace; an operator key may not read customers", async () => {
    for (const k of [undefined, w.keys.finance]) {
      await expectRefused(api, () => get("/v1/customers/c1", k), 400, "invalid_request", "marketplace_id");
    }
    expect((await get("/v1/customers", w.keys.o1)).body).toMatchObject({ status: 403, code: "forbidden" });
    expect((await get("/v1/customers/c1?marketplace_id=m1", w.keys.o1)).body).toMatchObject({ status: 403, code: "forbidden" });
  });
});

describe("reconciliation runs", () => {
  const runs: Array<{ id: string; asset: string }> = [];
  beforeAll(async () => {
    for (const asset of ["TUSD", "ETH", "TUSD", "TUSD"]) {
      await chain.test.mine({ blocks: 2 });
      const final = Number(await chain.public.getBlockNumber()) - 1;
      const body = { chain_id: 31337, asset, from_block: 0, to_block: final };
      runs.push(expectStatus(await api.call("POST", "/v1/reconciliations", { key: w.keys.finance, body }), 201).body);
    }
  });

  it("lists runs newest first, over several pages, as GET /v1/reconciliations/{id} shows each", async () => {
    const newestFirst = [...runs].reverse();
    const { items, pages } = await allPages<{ id: string }>("/v1/reconciliations", 1, w.keys.finance);
    expect(pages).toBe(4);
    expect(items.map((r) => r.id)).toEqual(newestFirst.map((r) => r.id));
    expect((await ok("/v1/reconciliations")).data).toEqual(items);
    for (const r of items) {
      const { items: _items, next_cursor: _next, limit: _limit, ...run } = await ok(`/v1/reconciliations/${r.id}`, w.keys.finance);
      expect(r).toEqual(run);
    }
    expect(items[0]).toMatchObject({ chain_id: 31337, asset: "TUSD", from_block: 0, requested_by: expect.any(String), summary: expect.any(Object) });
  });

  it("filters by chain and asset", async () => {
    const tusd = await allPages<{ id: string; asset: string }>("/v1/reconciliations?asset=TUSD&chain_id=31337", 2, w.keys.finance);
    expect(tusd.items.map((r) => r.id)).toEqual(
      runs
        .filter((r) => r.asset === "TUSD")
        .map((r) => r.id)
        .reverse(),
    );
    expect(tusd.pages).toBe(2);
    expect((await ok("/v1/reconciliations?asset=ETH")).data.map((r: { id: string }) => r.id)).toEqual([runs[1]!.id]);
    expect(await ok("/v1/reconciliations?chain_id=1")).toEqual({ data: [], next_cursor: null, limit: 100 });
    expect(await ok("/v1/reconciliations?asset=USDC")).toEqual({ data: [], next_cursor: null, limit: 100 });
    await expectRefused(api, () => get("/v1/reconciliations?asset=NOPE"), 404, "asset_not_found", "asset");
    await expectRefused(api, () => get("/v1/reconciliations?chain_id=abc"), 400, "invalid_request", "chain_id");
  });

  it("is for admin and finance only", async () => {
    for (const k of [w.keys.m1, w.keys.o1]) expect((await get("/v1/reconciliations", k)).body).toMatchObject({ status: 403, code: "forbidden" });
  });
});

describe("what every list and read refuses", () => {
  it("unknown query parameters, and cursors the API did not give, are 400s naming them; reads write nothing", async () => {
    for (const [path, name] of [
      ["/v1/marketplaces?name=m1", "name"],
      ["/v1/marketplaces/m1?marketplace_id=m1", "marketplace_id"],
      ["/v1/operators?marketplace_id=m1", "marketplace_id"],
      ["/v1/operators/o1?x=1", "x"],
      ["/v1/customers?marketplace=m1", "marketplace"],
      ["/v1/customers/c1?marketplace_id=m1&billing=prepaid", "billing"],
      ["/v1/reconciliations?status=matched", "status"],
    ] as const) {
      await expectRefused(api, () => get(path), 400, "invalid_request", name);
    }
    for (const path of [
      "/v1/marketplaces?cursor=Not%20One",
      "/v1/operators?cursor=..%2Fx",
      "/v1/customers?cursor=m1",
      "/v1/customers?cursor=m1%2Fc1%2Fx",
      "/v1/reconciliations?cursor=r-1",
    ]) {
      await expectRefused(api, () => get(path), 400, "invalid_request", "cursor");
    }
    for (const path of ["/v1/marketplaces/Bad%20Id", "/v1/operators/UPPER", "/v1/customers/A?marketplace_id=m1"]) {
      expect((await get(path)).status, path).toBe(400);
    }
    const before = await writeCounts(api.db);
    for (const path of ["/v1/marketplaces", "/v1/operators", "/v1/customers", "/v1/customers/c1?marketplace_id=m1", "/v1/reconciliations"]) await ok(path);
    expect(await writeCounts(api.db)).toEqual(before);
  });
});
