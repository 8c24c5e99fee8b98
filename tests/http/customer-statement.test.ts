import { beforeAll, describe, expect, it } from "vitest";
import { ahead, usageMonth } from "../support/clock.js";
import { parseCsv } from "../support/display.js";
import { expectRefused, expectStatus, worldPerFile } from "../support/http.js";

/**
 * GET /v1/customers/{id}/statement and /balance: a customer's money per asset over a period, in
 * JSON, CSV and HTML, adding up to the ledger's balances. Every instant is the usage month's (fixed
 * when the file loads) or the service clock's.
 */
const t = worldPerFile();

type Line = {
  type: string;
  asset_id: string;
  transfer_id: string;
  amount: string;
  effective_at: string;
  description: string;
  deposit_source: string | null;
  reference: string | null;
  usage_record_id: string | null;
  external_id: string | null;
  quantity: string | null;
  unit: string | null;
  unit_price: string | null;
  rate: string | null;
  gross: string | null;
  [k: string]: unknown;
};
type AssetSums = Record<"opening" | "deposits" | "usage" | "refunds" | "other" | "closing" | "closing_held", string> & {
  asset: string;
  asset_id: string;
  lines: number;
  [k: string]: unknown;
};

const SCRIPT = "<script>alert(1)</script>";
const REASON = "meter <img src=x onerror=alert(2)> fault";
const MARKET_NAME = 'Market <script>alert("m")</script> & co';
// The period: from the 12th of the usage month (so that the record of the 5th is in the opening
// balance) to a day after the service clock's now (so that today's deposits are in it).
const from = usageMonth.day(0, 12).toISOString();
const to = ahead(24 * 3_600_000).toISOString();
const path = (extra = "") => `/v1/customers/stmt/statement?from=${from}&to=${to}${extra}`;
/** A period of one hour of the usage month's `day`. */
const hourOf = (day: number, hours = 1) => ({ period_start: usageMonth.day(9, day).toISOString(), period_end: usageMonth.day(9 + hours, day).toISOString() });

const made: { u2?: string; u3?: string; u4?: string; refundTransfer?: string; escrows: string[] } = { escrows: [] };

beforeAll(async () => {
  const { api, w } = t;
  const m1 = { key: w.keys.m1 };
  expectStatus(await api.call("PATCH", "/v1/marketplaces/m1", { ...m1, body: { name: MARKET_NAME } }), 200);
  expectStatus(await api.call("POST", "/v1/customers", { ...m1, body: { id: "stmt", billing: "prepaid" } }), 201);
  // Money in: a deposit the marketplace records (50 USDC), and a receipt finance records (20 USDC) and another key approves.
  expectStatus(await api.call("POST", "/v1/customers/stmt/deposits", { ...m1, body: { asset: "USDC", amount: "50000000" } }), 201);
  const receipt = expectStatus(
    await api.call("POST", "/v1/marketplaces/m1/receipts", {
      key: w.keys.finance,
      body: { asset: "USDC", amount: "20000000", reference: "wire <b>42</b>", customer_id: "stmt" },
    }),
    201,
  ).body;
  expectStatus(await api.call("POST", `/v1/proposals/${receipt.id}/approve`, { key: w.keys.admin, body: {} }), 200);
  const usage = async (externalId: string, extra: Record<string, unknown>) =>
    expectStatus(await api.call("POST", "/v1/usage", { ...m1, body: w.usage(externalId, { customer_id: "stmt", ...extra }) }), 201).body;
  // Before the period: 3600 gpu-seconds at 0.000694 (2.4984 USDC).
  await usage("stmt-1", hourOf(5));
  // In it: 7200 gpu-seconds at 0.001 (7.2 USDC), reversed; 2 gpu-hours priced by amount (1 USDC).
  made.u2 = (await usage(SCRIPT, { quantity: "7200", unit_price: "0.001", ...hourOf(20) })).id;
  made.u3 = (await usage("stmt-3", { quantity: "2", unit: "gpu_hour", unit_price: undefined, amount: "1000000", ...hourOf(22, 2) })).id;
  made.refundTransfer = expectStatus(
    await api.call("POST", `/v1/usage/${made.u2}/reverse`, { ...m1, body: { reason: REASON } }),
    201,
  ).body.reversal_transfer_id;
  // A hold charged once and closed (its opening and closing move no money in or out), and one still open (3 USDC held).
  const hold = async (amount: string) =>
    expectStatus(await api.call("POST", "/v1/holds", { ...m1, body: { customer_id: "stmt", asset: "USDC", amount } }), 201).body.id as string;
  const closed = await hold("5000000");
  made.u4 = (await usage("stmt-4", { hold_id: closed, ...hourOf(25) })).id;
  expectStatus(await api.call("POST", `/v1/holds/${closed}/close`, m1), 200);
  await hold("3000000");
  made.escrows = (
    await api.db.query<{ id: string }>("select id from accounts where marketplace_id = 'm1' and owner_id = 'stmt' and code = 'customer_hold'")
  ).map((r) => r.id);
});

async function statement(extra = "", key = t.w.keys.m1) {
  return expectStatus(await t.api.call("GET", path(extra), { key }), 200).body as {
    assets: AssetSums[];
    data: Line[];
    next_cursor: string | null;
    [k: string]: unknown;
  };
}

/** The ledger's posted balance of an account from the entries effective at or before `at`. */
async function postedAsOf(accountId: string, at: Date): Promise<bigint> {
  return BigInt(expectStatus(await t.api.call("GET", `/v1/accounts/${accountId}/balance?as_of=${at.toISOString()}`), 200).body.posted);
}

describe("GET /v1/customers/{id}/statement", () => {
  it("adds up: opening + every line = closing = the ledger's balance of the customer's accounts before `to`", async () => {
    const s = await statement("&limit=1000");
    expect(s).toMatchObject({ marketplace_id: "m1", marketplace_name: MARKET_NAME, customer_id: "stmt", billing: "prepaid", from, to, next_cursor: null });
    expect(s.assets).toHaveLength(1);
    const usdc = s.assets[0]!;
    expect(usdc).toMatchObject({
      asset: "USDC",
      opening: "-2498400", // the record of the 5th, effective before `from`
      deposits: "70000000",
      usage: String(-(7_200_000 + 1_000_000 + 2_498_400)),
      refunds: "7200000",
      other: "0",
      closing_held: "3000000",
      lines: 6,
      opening_display: "-2.4984",
      deposits_display: "70",
    });
    const sum = s.data.reduce((a, l) => a + BigInt(l.amount), 0n);
    expect(BigInt(usdc.opening) + sum).toBe(BigInt(usdc.closing));
    expect(BigInt(usdc.opening) + BigInt(usdc.deposits) + BigInt(usdc.usage) + BigInt(usdc.refunds) + BigInt(usdc.other)).toBe(BigInt(usdc.closing));
    // The ledger: the customer's balance account and its holds' escrow accounts, from the entries before `to`.
    const customer = expectStatus(await t.api.call("GET", "/v1/customers/stmt", { key: t.w.keys.m1 }), 200).body;
    const before = new Date(Date.parse(to) - 1);
    let ledger = await postedAsOf(customer.accounts[0].account_id, before);
    for (const id of made.escrows) ledger += await postedAsOf(id, before);
    expect(made.escrows).toHaveLength(2);
    expect(BigInt(usdc.closing)).toBe(ledger);
    // And the balance now: the period ends after the clock's now, so its closing balance is the total.
    const balance = expectStatus(await t.api.call("GET", "/v1/customers/stmt/balance", { key: t.w.keys.m1 }), 200).body;
    expect(balance.data).toEqual([
      expect.objectContaining({ asset: "USDC", total: usdc.closing, held: "3000000", posted: String(BigInt(usdc.closing) - 3_000_000n), credit_limit: null }),
    ]);
    expect(balance.data[0].available).toBe(balance.data[0].posted);
  });

  it("shows deposits, usage lines with quantity, unit, price and amount, and a reversal as a refund line", async () => {
    const lines = (await statement("&limit=1000")).data;
    expect(lines.map((l) => l.type).sort()).toEqual(["deposit", "deposit", "refund", "usage", "usage", "usage"]);
    const deposits = lines.filter((l) => l.type === "deposit");
    expect(deposits.map((l) => [l.deposit_source, l.amount, l.reference]).sort()).toEqual([
      ["marketplace", "50000000", null],
      ["receipt", "20000000", "wire <b>42</b>"],
    ]);
    const byRecord = (id: string | undefined, type: string) => lines.find((l) => l.usage_record_id === id && l.type === type)!;
    expect(byRecord(made.u2, "usage")).toMatchObject({
      amount: "-7200000",
      gross: "7200000",
      gross_display: "7.2",
      quantity: "7200",
      unit: "gpu_second",
      unit_price: "0.001",
      rate: "1000",
      rate_display: "0.001",
      resource: "gpu:h100-80gb",
      external_id: SCRIPT,
      effective_at: usageMonth.day(10, 20).toISOString(),
    });
    // Priced by amount: no unit price, the rate is gross per unit.
    expect(byRecord(made.u3, "usage")).toMatchObject({
      amount: "-1000000",
      quantity: "2",
      unit: "gpu_hour",
      unit_price: null,
      rate: "500000",
      rate_display: "0.5",
    });
    // Charged to a hold: on the statement like any other usage.
    expect(byRecord(made.u4, "usage")).toMatchObject({ amount: "-2498400", external_id: "stmt-4" });
    // The reversal: money back, dated like the record it reverses, with its reason.
    expect(byRecord(made.u2, "refund")).toMatchObject({
      amount: "7200000",
      transfer_id: made.refundTransfer,
      external_id: SCRIPT,
      effective_at: usageMonth.day(10, 20).toISOString(),
      description: `refund: ${REASON}`,
    });
    // In statement order: by effective time.
    const times = lines.map((l) => l.effective_at);
    expect(times).toEqual([...times].sort());
  });

  it("pages with a cursor: the pages' lines are the whole statement's, and the sums are on every page", async () => {
    const whole = await statement("&limit=1000");
    const pages: (typeof whole)[] = [];
    let cursor: string | null = null;
    do {
      pages.push(await statement(`&limit=4${cursor === null ? "" : `&cursor=${cursor}`}`));
      cursor = pages.at(-1)!.next_cursor;
    } while (cursor !== null && pages.length < 10);
    expect(pages.map((p) => p.data.length)).toEqual([4, 2]);
    expect(pages.flatMap((p) => p.data)).toEqual(whole.data);
    for (const p of pages) expect(p.assets).toEqual(whole.assets);
    await expectRefused(
      t.api,
      () => t.api.call("GET", path(`&cursor=${Buffer.from("c:1:x").toString("base64url")}`), { key: t.w.keys.m1 }),
      400,
      "invalid_request",
      "cursor",
    );
    // Another customer's line is no cursor of this statement.
    const theirs = expectStatus(await t.api.call("GET", `/v1/customers/c1/statement?from=${from}&to=${to}&limit=1`, { key: t.w.keys.m1 }), 200).body;
    expect(theirs.next_cursor).not.toBeNull();
    await expectRefused(t.api, () => t.api.call("GET", path(`&cursor=${theirs.next_cursor}`), { key: t.w.keys.m1 }), 400, "invalid_request", "cursor");
  });

  it("CSV: one row per line, the JSON's fields, every line of the period", async () => {
    const lines = (await statement("&limit=1000")).data;
    // Admin and finance keys name the customer's marketplace.
    await expectRefused(t.api, () => t.api.call("GET", path("&format=csv"), { key: t.w.keys.finance }), 400, "invalid_request", "marketplace_id");
    const csvRes = expectStatus(await t.api.call("GET", path("&format=csv&marketplace_id=m1"), { key: t.w.keys.finance }), 200);
    expect(csvRes.headers.get("content-type")).toMatch(/^text\/csv/);
    const csv = parseCsv(csvRes.body as string);
    expect(csv.rows).toHaveLength(lines.length);
    for (const [i, row] of csv.rows.entries()) {
      for (const column of csv.header) expect(row[column], `${i} ${column}`).toBe(String(lines[i]![column] ?? ""));
    }
    await expectRefused(t.api, () => t.api.call("GET", path("&format=csv&limit=3"), { key: t.w.keys.m1 }), 400, "invalid_request", "limit");
  });

  it("HTML: a printable page with the totals, every text escaped", async () => {
    const s = await statement("&limit=1000");
    const res = expectStatus(await t.api.call("GET", path("&format=html&marketplace_id=m1"), { key: t.w.keys.admin }), 200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const html = res.body as string;
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain("@media print");
    // Caller-chosen text is shown, never run: no markup of theirs survives.
    expect(html).not.toContain("<script");
    expect(html).not.toContain("<img");
    expect(html).not.toContain("<b>42");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).toContain("&lt;img src=x onerror=alert(2)&gt;");
    expect(html).toContain("Market &lt;script&gt;alert(&quot;m&quot;)&lt;/script&gt; &amp; co");
    const usdc = s.assets[0]!;
    for (const v of [usdc.opening_display, usdc.deposits_display, usdc.usage_display, usdc.refunds_display, usdc.closing_display, usdc.closing_held_display])
      expect(html).toContain(`<td class="num">${v as string}</td>`);
    expect(html).toContain("stmt (prepaid)");
    // Generated at the service clock's instant, which the JSON gives too.
    expect(html).toMatch(/<dt>Generated<\/dt><dd>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{3})? UTC<\/dd>/);
    await expectRefused(t.api, () => t.api.call("GET", path("&format=html&cursor=x"), { key: t.w.keys.m1 }), 400, "invalid_request", "cursor");
  });

  it("another marketplace's key finds no such customer; an operator key is refused", async () => {
    await expectRefused(t.api, () => t.api.call("GET", path(), { key: t.w.keys.m2 }), 404, "customer_not_found");
    await expectRefused(t.api, () => t.api.call("GET", path("&marketplace_id=m1"), { key: t.w.keys.m2 }), 404, "customer_not_found");
    await expectRefused(t.api, () => t.api.call("GET", "/v1/customers/stmt/balance?marketplace_id=m1", { key: t.w.keys.m2 }), 404, "customer_not_found");
    await expectRefused(t.api, () => t.api.call("GET", path(), { key: t.w.keys.o1 }), 403, "forbidden");
    await expectRefused(t.api, () => t.api.call("GET", "/v1/customers/stmt/balance", { key: t.w.keys.o1 }), 403, "forbidden");
    await expectRefused(
      t.api,
      () => t.api.call("GET", path("&marketplace_id=m1").replace("/stmt/", "/nobody/"), { key: t.w.keys.admin }),
      404,
      "customer_not_found",
    );
  });

  it("refuses a bad period and unknown parameters", async () => {
    const m1 = { key: t.w.keys.m1 };
    await expectRefused(t.api, () => t.api.call("GET", `/v1/customers/stmt/statement?from=${to}&to=${from}`, m1), 400, "invalid_request", "from");
    await expectRefused(t.api, () => t.api.call("GET", `/v1/customers/stmt/statement?from=${from}&to=${from}`, m1), 400, "invalid_request", "from");
    await expectRefused(t.api, () => t.api.call("GET", `/v1/customers/stmt/statement?from=${from}`, m1), 400, "invalid_request", "to");
    await expectRefused(t.api, () => t.api.call("GET", `/v1/customers/stmt/statement?from=yesterday&to=${to}`, m1), 400, "invalid_request", "from");
    await expectRefused(t.api, () => t.api.call("GET", path("&format=pdf"), m1), 400, "invalid_request", "format");
    await expectRefused(t.api, () => t.api.call("GET", path("&asset=USDC"), m1), 400, "invalid_request", "asset");
    await expectRefused(t.api, () => t.api.call("GET", "/v1/customers/stmt/balance?as_of=2026-01-01T00:00:00Z", m1), 400, "invalid_request", "as_of");
  });

  it("a period with nothing in it has no assets and no lines", async () => {
    const empty = expectStatus(
      await t.api.call("GET", `/v1/customers/stmt/statement?from=2001-01-01T00:00:00Z&to=2001-02-01T00:00:00Z&format=html`, { key: t.w.keys.m1 }),
      200,
    ).body as string;
    expect(empty).toContain("No balance and no movement in this period.");
    const json = expectStatus(
      await t.api.call("GET", "/v1/customers/stmt/statement?from=2001-01-01T00:00:00Z&to=2001-02-01T00:00:00Z", { key: t.w.keys.m1 }),
      200,
    ).body;
    expect(json).toMatchObject({ assets: [], data: [], next_cursor: null });
  });
});
