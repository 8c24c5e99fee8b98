import { afterEach, describe, expect, it } from "vitest";
import { usageMonth, wideRange } from "../support/clock.js";
import { parseCsv } from "../support/display.js";
import { expectStatus, testApi, world, type TestApi } from "../support/http.js";
import { payoutWorld, TOKEN, type PayoutWorld } from "../support/payout-world.js";

type Line = { entry_id: string; asset_id: string; amount: string; balance_after: string; payout_id: string | null; tx_hash: string | null };

let api: TestApi | undefined;
let chain: PayoutWorld | undefined;
afterEach(async () => {
  await api?.close();
  await chain?.close();
  api = undefined;
  chain = undefined;
});

/** Every page of a statement, following next_cursor. */
type Page = { data: Line[]; next_cursor: string | null; limit: number; opening: unknown; closing: unknown };
async function pages(a: TestApi, key: string, path: string, limit: number): Promise<Page[]> {
  const out: Page[] = [];
  let cursor: string | null = null;
  do {
    const page: Page = expectStatus(await a.call("GET", `${path}&limit=${limit}${cursor === null ? "" : `&cursor=${cursor}`}`, { key }), 200).body;
    out.push(page);
    cursor = page.next_cursor;
  } while (cursor !== null && out.length < 100);
  return out;
}

describe("GET /v1/operators/{id}/statement", () => {
  it("pages with a cursor, and a line's running balance on any page is the one of the whole statement", async () => {
    api = await testApi();
    const w = await world(api);
    // o1's lines in two assets, over several days, two at the same instant, and a reversal (a debit).
    expectStatus(await api.call("POST", "/v1/assets", { body: { code: "EURC", scale: 2, settlement: { kind: "offchain" } } }), 201);
    expectStatus(await api.call("POST", "/v1/customers/c1/deposits", { key: w.keys.m1, body: { asset: "EURC", amount: "1000000" } }), 201);
    const at = (day: number) => ({ period_start: usageMonth.day(9, day).toISOString(), period_end: usageMonth.day(10, day).toISOString() });
    for (const [i, day] of [3, 1, 7, 7, 2, 9, 5].entries())
      expectStatus(await api.call("POST", "/v1/usage", { key: w.keys.m1, body: w.usage(`s-${i}`, { quantity: String(600 * (i + 1)), ...at(day) }) }), 201);
    for (const [i, day] of [4, 6, 8].entries())
      expectStatus(await api.call("POST", "/v1/usage", { key: w.keys.m1, body: w.usage(`e-${i}`, { asset: "EURC", unit_price: "0.01", ...at(day) }) }), 201);
    const toReverse = expectStatus(await api.call("POST", "/v1/usage", { key: w.keys.m1, body: w.usage("s-rev", at(6)) }), 201).body;
    expectStatus(await api.call("POST", `/v1/usage/${toReverse.id}/reverse`, { key: w.keys.m1, body: { reason: "meter fault" } }), 201);

    const path = `/v1/operators/o1/statement?${wideRange()}`;
    const whole = expectStatus(await api.call("GET", `${path}&limit=1000`, { key: w.keys.o1 }), 200).body;
    expect(whole).toMatchObject({ next_cursor: null, limit: 1000 });
    expect(whole.data.length).toBe(13); // world-1, 7 + 3 records, s-rev and its reversal
    expect(whole.data.some((l: Line) => l.amount.startsWith("-"))).toBe(true);
    // Without a limit: a page of at most 100.
    expect(expectStatus(await api.call("GET", path, { key: w.keys.o1 }), 200).body).toMatchObject({ limit: 100, next_cursor: null });

    const paged = await pages(api, w.keys.o1, path, 3);
    expect(paged.map((p) => p.data.length)).toEqual([3, 3, 3, 3, 1]);
    expect(paged.every((p) => p.limit === 3)).toBe(true);
    expect(paged.at(-1)!.next_cursor).toBeNull();
    // The lines of all pages, running balances included, are exactly the unpaged statement's.
    expect(paged.flatMap((p) => p.data)).toEqual(whole.data);
    expect(paged[1]!.data.map((l) => l.balance_after)).toEqual(whole.data.slice(3, 6).map((l: Line) => l.balance_after));
    // The balances beside the list are the statement's, on every page.
    for (const p of paged) expect({ opening: p.opening, closing: p.closing }).toEqual({ opening: whole.opening, closing: whole.closing });
    // Each asset's lines run from its opening to its closing.
    for (const o of whole.opening as { asset_id: string; balance: string }[]) {
      let running = BigInt(o.balance);
      for (const l of whole.data.filter((x: Line) => x.asset_id === o.asset_id)) {
        running += BigInt(l.amount);
        expect(BigInt(l.balance_after)).toBe(running);
      }
      expect(running.toString()).toBe((whole.closing as { asset_id: string; balance: string }[]).find((c) => c.asset_id === o.asset_id)!.balance);
    }

    // One asset's statement pages the same way.
    const eurc = (whole.data as Line[]).find((l) => l.asset_id !== w.asset.id)!.asset_id;
    const oneAsset = expectStatus(await api.call("GET", `${path}&asset_id=${eurc}&limit=1000`, { key: w.keys.o1 }), 200).body.data;
    expect((await pages(api, w.keys.o1, `${path}&asset_id=${eurc}`, 2)).flatMap((p) => p.data)).toEqual(oneAsset);

    // CSV: every line of the period in one file, with no paging.
    const csv = parseCsv(expectStatus(await api.call("GET", `${path}&format=csv`, { key: w.keys.o1 }), 200).body as string);
    expect(csv.rows.map((r) => r.balance_after)).toEqual(whole.data.map((l: Line) => l.balance_after));
    const csvPaged = await api.call("GET", `${path}&format=csv&limit=3`, { key: w.keys.o1 });
    expect(csvPaged.body).toMatchObject({ status: 400, code: "invalid_request", errors: [{ path: "limit" }] });

    // A cursor is one this statement gave: not made up, not another operator's entry.
    const bad = await api.call("GET", `${path}&cursor=${Buffer.from("s:abc").toString("base64url")}`, { key: w.keys.o1 });
    expect(bad.body).toMatchObject({ status: 400, code: "invalid_request", errors: [{ path: "cursor" }] });
    expectStatus(await api.call("POST", "/v1/usage", { key: w.keys.m2, body: w.usage("o2-1", { operator_id: "o2" }) }), 201);
    const theirs = expectStatus(await api.call("GET", `/v1/operators/o2/statement?${wideRange()}&limit=1`, { key: w.keys.o2 }), 200).body;
    const foreign = Buffer.from(`s:${theirs.data[0].entry_id}`).toString("base64url");
    const other = await api.call("GET", `${path}&cursor=${foreign}`, { key: w.keys.o1 });
    expect(other.body).toMatchObject({ status: 400, code: "invalid_request", errors: [{ path: "cursor" }] });
  });

  it("names the payout and its chain transaction (or off-chain payment reference) on the lines that pay one out, in JSON and CSV", async () => {
    chain = await payoutWorld();
    api = await testApi({ db: chain.db, settlements: chain.settlements });
    const finance = expectStatus(await api.call("POST", "/v1/api-keys", { body: { name: "finance", role: "finance" } }), 201).body.secret as string;
    const op = await chain.operator("op-s", { [TOKEN]: 5_000_000n });
    const onChain = expectStatus(
      await api.call("POST", "/v1/payouts", { key: finance, body: { operator_id: op.id, asset: TOKEN, amount: "2000000" } }),
      201,
    ).body;
    await chain.drive([onChain.id]);
    const paid = expectStatus(await api.call("GET", `/v1/payouts/${onChain.id}`, { key: finance }), 200).body;
    expect(paid).toMatchObject({ status: "confirmed", tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expectStatus(await api.call("POST", "/v1/assets", { body: { code: "EUR", scale: 2, settlement: { kind: "offchain" } } }), 201);
    await chain.credit(op.id, "EUR", 500_00n);
    const offChain = expectStatus(
      await api.call("POST", "/v1/payouts", { key: finance, body: { operator_id: op.id, asset: "EUR", amount: "30000" } }),
      201,
    ).body;
    expectStatus(await api.call("POST", `/v1/payouts/${offChain.id}/mark-paid`, { key: finance, body: { reference: "SEPA-42" } }), 200);

    const path = `/v1/operators/${op.id}/statement?${wideRange()}`;
    const lines = expectStatus(await api.call("GET", path, { key: finance }), 200).body.data as (Line & { external_reference: string | null })[];
    expect(lines).toHaveLength(4); // two credits, two payouts
    const byPayout = (id: string) => lines.find((l) => l.payout_id === id);
    expect(byPayout(onChain.id)).toMatchObject({ amount: "-2000000", tx_hash: paid.tx_hash, external_reference: null });
    expect(byPayout(offChain.id)).toMatchObject({ amount: "-30000", tx_hash: null, external_reference: "SEPA-42" });
    for (const l of lines.filter((x) => !x.amount.startsWith("-"))) expect(l).toMatchObject({ payout_id: null, tx_hash: null, external_reference: null });

    const csv = parseCsv(expectStatus(await api.call("GET", `${path}&format=csv`, { key: finance }), 200).body as string);
    expect(csv.header).toEqual(expect.arrayContaining(["payout_id", "tx_hash", "external_reference"]));
    expect(csv.rows.map((r) => [r.entry_id, r.payout_id, r.tx_hash, r.external_reference])).toEqual(
      lines.map((l) => [l.entry_id, l.payout_id ?? "", l.tx_hash ?? "", l.external_reference ?? ""]),
    );
  });
});
